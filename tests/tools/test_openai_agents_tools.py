"""OpenAI Agents SDK: a real Runner with a scripted model (a ``Model`` subclass that plays turns);
each function tool call is one ``execute_tool`` span with the model's call id."""

from __future__ import annotations

from typing import Any

import pytest

agents = pytest.importorskip("agents")

from agents import Agent, ModelResponse, Runner, Usage, function_tool  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from tests.context.helpers import by_name, spans_of, tree  # noqa: E402


@function_tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@function_tool
def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def _call(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", id=f"fc_{call_id}", call_id=call_id, name=name, arguments=arguments
    )


def _text(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id="msg_1",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """Clearly scripted: answers each get_response with the next list of output items."""

    def __init__(self, turns: list[list[Any]]):
        self.turns = turns
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        turn = self.turns[min(self.calls, len(self.turns) - 1)]
        self.calls += 1
        return ModelResponse(output=turn, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("scripted model: no streaming")


async def test_function_tool_calls_carry_the_model_call_ids(recording):
    agents.set_tracing_disabled(True)  # the SDK's own (non-OTel) tracing would try the network
    model = ScriptedModel(
        [
            [
                _call("call_mul", "multiply", '{"a": 6, "b": 7}'),
                _call("call_fail", "fail", '{"reason": "x"}'),
            ],
            [_text("42")],
        ]
    )
    agent = Agent(name="calc", instructions="compute", model=model, tools=[multiply, fail])
    result = await Runner.run(agent, "6 * 7?")  # the run is its own invoke_agent span
    assert result.final_output == "42" and model.calls == 2
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    calls = sorted(("execute_tool multiply", "execute_tool fail"))
    shape = tree(spans)
    assert [name for name, _ in shape] == ["invoke_agent calc"]
    assert sorted(name for name, _ in shape[0][1]) == calls
    mul = by_name(spans, "execute_tool multiply")
    assert mul.attributes["gen_ai.tool.call.id"] == "call_mul"
    assert mul.attributes["gen_ai.tool.description"] == "Multiply two integers."
    assert mul.attributes["agent_trace.tool.import_path"] == f"{__name__}:multiply"
    assert mul.content == {"tool_arguments": {"a": 6, "b": 7}, "tool_result": 42}
    failed = by_name(spans, "execute_tool fail")
    assert failed.attributes["gen_ai.tool.call.id"] == "call_fail"
    assert failed.status == "ERROR" and failed.attributes["error.type"] == "RuntimeError"
    assert [e["name"] for e in failed.events] == ["exception"]  # the SDK hid it from the model
    assert "error occurred" in failed.content["tool_result"]  # what the model was told
