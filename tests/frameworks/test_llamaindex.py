"""LlamaIndex agents (``FunctionAgent`` on ``llama_index.llms.openai.OpenAI``) against the replay
server: one ``invoke_agent`` span per ``run``, plain and streamed, with the model calls and the
tool call (the model's call id) under it, one trace, the session id on every span, the
conversation and a snapshot per model call in the session, what the server saw matching what was
recorded; a failing tool on its span; and the recorded conversation restored into a new agent's
``chat_history`` that continues it.

llama-index-llms-openai needs openai < 3: these run in a virtualenv of their own
(``python -m tests.services.frameworks2 run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.openai")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.llms import ChatMessage  # noqa: E402
from llama_index.llms.openai import OpenAI  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
SHAPE = [
    (
        "invoke_agent weather",
        [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
    )
]


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm: Any, stream: bool = False, tool: Any = get_weather) -> FunctionAgent:
    model = OpenAI(model="gpt-4o-mini", api_base=llm.openai_url, api_key="sk-test", max_retries=0)
    return FunctionAgent(
        tools=[tool],
        llm=model,
        name="weather",
        system_prompt="You answer weather questions.",
        streaming=stream,
    )


async def _run(agent: FunctionAgent, streamed: bool, **kwargs: Any) -> Any:
    handler = agent.run(user_msg=QUESTION, **kwargs)
    if streamed:
        async for _event in handler.stream_events():
            pass
    return await handler


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_one_agent_span_and_one_trace_per_run(streamed, llm, checkpoint, memory_exporter):
    suffix = "_stream" if streamed else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    result = asyncio.run(_run(_agent(llm, streamed), streamed))
    assert str(result) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE
    run = next(s for s in finished if s.name == "invoke_agent weather")
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert "Weather of a city." in tool.attributes["gen_ai.tool.description"]
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["gen_ai.response.id"] for c in chats] == [
        f"chatcmpl-tool00{2 if streamed else 1}",
        f"chatcmpl-final0{2 if streamed else 1}",
    ]

    sent = llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == sent[3]["tool_call_id"] == "call_weather_1"
    assert sent[3]["content"] == TOOL_OUTPUT
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "tool", "assistant"]
    assert recorded[3]["tool_call_id"] == "call_weather_1" and recorded[-1]["content"] == ANSWER
    assert len([e for e in session.events if e.type == "snapshot"]) == 2
    in_session = spans_of(checkpoint_file)
    run_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert run_entry.content["agent_input"] == QUESTION and run_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def test_a_failing_tool_is_on_its_span_and_the_run_goes_on(llm, memory_exporter):
    def get_weather(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    llm.queue("openai_chat_tool_call", "openai_chat_final")
    assert str(asyncio.run(_run(_agent(llm, tool=get_weather), False))) == ANSWER
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "RuntimeError"
    assert llm.requests[1]["body"]["messages"][3]["content"] == "weather service down"


def test_a_failed_run_ends_its_span_with_the_error(llm, memory_exporter):
    import openai

    llm.queue("openai_error_400")
    with pytest.raises(openai.BadRequestError):
        asyncio.run(_run(_agent(llm), False))
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "BadRequestError"


def test_the_recorded_conversation_is_restored_into_a_new_agent_that_continues_it(llm, checkpoint):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    asyncio.run(_run(_agent(llm), False))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "llamaindex"
    history = restored.restored
    assert all(isinstance(m, ChatMessage) for m in history)
    assert [m.role.value for m in history] == ["user", "assistant", "tool", "assistant"]

    llm.reset()
    done = resume_and_continue(session, None, "And tomorrow?", agent)  # the server's default answer
    assert done.answer == "Hello! How can I help you today?"
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == QUESTION and sent[3]["tool_call_id"] == "call_weather_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert sent[4]["content"] == ANSWER and sent[-1]["content"] == "And tomorrow?"
