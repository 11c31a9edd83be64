"""Pydantic AI runs through its own OpenAI chat model against the replay server: one
``invoke_agent`` span per run (``run_sync``, ``run``, ``run_stream``) with the model calls and the
tool call (the model's call id) under it, one trace, the session id on every span, the
conversation and a snapshot per model call in the session, what the server saw matching what
was recorded; with Pydantic AI's own instrumentation on, its spans enriched and none doubled;
and the recorded conversation restored into a new agent that continues it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pydantic_ai = pytest.importorskip("pydantic_ai")

from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

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


def _agent(llm: Any) -> Agent:
    provider = OpenAIProvider(base_url=llm.openai_url, api_key="sk-test")
    agent = Agent(
        OpenAIChatModel("gpt-4o-mini", provider=provider),
        name="weather",
        instructions="You answer weather questions.",
    )
    agent.tool_plain(get_weather)
    return agent


def _run(agent: Agent, how: str, llm: Any) -> Any:
    suffix = "_stream" if how == "run_stream" else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    if how == "run_sync":
        return agent.run_sync(QUESTION).output
    if how == "run":
        return asyncio.run(agent.run(QUESTION)).output

    async def streamed() -> Any:
        async with agent.run_stream(QUESTION) as run:
            return await run.get_output()

    return asyncio.run(streamed())


def _the_server_saw_the_recorded_calls(llm: Any, checkpoint_file: Any) -> None:
    """Two model requests; the second carries the tool's result under the model's call id, as
    the session's second model call has it."""
    bodies = [r["body"] for r in llm.requests]
    assert len(bodies) == 2
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user"]
    sent = bodies[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == sent[3]["tool_call_id"] == "call_weather_1"
    assert sent[3]["content"] == TOOL_OUTPUT
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "tool", "assistant"]
    assert recorded[3]["tool_call_id"] == "call_weather_1" and recorded[3]["content"] == TOOL_OUTPUT
    assert recorded[-1]["content"] == ANSWER
    assert len([e for e in session.events if e.type == "snapshot"]) == 2  # one per model call


@pytest.mark.parametrize("how", ["run_sync", "run", "run_stream"])
def test_one_agent_span_and_one_trace_per_run(how, llm, checkpoint, memory_exporter):
    assert _run(_agent(llm), how, llm) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1  # one trace per run
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE
    run = next(s for s in finished if s.name == "invoke_agent weather")
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "weather"
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert run.attributes["gen_ai.conversation.id"]  # the run's conversation_id
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert tool.attributes["gen_ai.tool.description"] == "Weather of a city."
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.kind for c in chats] == [SpanKind.CLIENT] * 2
    assert [c.attributes["gen_ai.response.id"] for c in chats] == [
        f"chatcmpl-tool00{2 if how == 'run_stream' else 1}",
        f"chatcmpl-final0{2 if how == 'run_stream' else 1}",
    ]
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    _the_server_saw_the_recorded_calls(llm, checkpoint_file)


def test_run_input_output_and_tool_io_reach_the_session_only_hashed_in_the_trace_tier(llm, checkpoint):
    _run(_agent(llm), "run_sync", llm)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    shareable = next(p for p in checkpoint.files if "checkpoint" not in p.name)
    checkpoint.stop()
    spans = spans_of(path)
    run = next(s for s in spans if s.name == "invoke_agent weather")
    assert run.content["agent_input"] == QUESTION and run.content["agent_output"] == ANSWER
    tool = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool.content["tool_arguments"] == {"city": "Paris"}
    assert tool.content["tool_result"] == TOOL_OUTPUT
    text = shareable.read_text()
    assert QUESTION not in text and ANSWER not in text
    shared = next(s for s in spans_of(shareable) if s.name == "invoke_agent weather")
    assert shared.content["agent_input"]["chars"] == len(QUESTION)


@pytest.mark.parametrize("how", ["run_sync", "run_stream"])
def test_its_own_instrumentation_is_enriched_not_doubled(how, llm, checkpoint, memory_exporter):
    agent = _agent(llm)
    agent.instrument = True  # Pydantic AI's own spans, through the global tracer provider
    assert _run(agent, how, llm) == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    finished = [s for s in memory_exporter.get_finished_spans() if not s.name.startswith(("POST", "GET"))]
    # its spans only: one agent span, two model spans, one tool span, in one trace
    assert sorted(s.name for s in finished) == sorted(
        ["invoke_agent weather", "chat gpt-4o-mini", "chat gpt-4o-mini", "execute_tool get_weather"]
    )
    assert {s.instrumentation_scope.name for s in finished} == {"pydantic-ai"}
    assert len({s.context.trace_id for s in finished}) == 1
    spans = [s for s in spans_of(path) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE
    run = next(s for s in spans if s.name == "invoke_agent weather")
    assert run.content["agent_input"] == QUESTION and run.content["agent_output"] == ANSWER
    tool = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool.content["tool_result"] == TOOL_OUTPUT
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    _the_server_saw_the_recorded_calls(llm, path)
    # its model spans: its own results as it set them (its finish reasons, not OpenAI's), and what
    # the openai call underneath adds that it lacks: the tool calls the model asked for
    n = 2 if how == "run_stream" else 1
    chats = sorted((s for s in finished if s.name == "chat gpt-4o-mini"), key=lambda s: s.start_time or 0)
    assert [_results(c) for c in chats] == [
        (f"chatcmpl-tool00{n}", "gpt-4o-mini-2024-07-18", ("tool_call",), 81, 16),
        (f"chatcmpl-final0{n}", "gpt-4o-mini-2024-07-18", ("stop",), 112, 12),
    ]
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert chats[0].attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "agent_trace.tool_calls.ids" not in chats[1].attributes


def _results(span: Any) -> tuple[Any, ...]:
    """What a model span says the call returned, as a trace viewer shows it."""
    return tuple(
        span.attributes.get(key)
        for key in (
            "gen_ai.response.id",
            "gen_ai.response.model",
            "gen_ai.response.finish_reasons",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        )
    )


def test_a_failed_run_ends_its_span_with_the_error(llm, memory_exporter):
    from pydantic_ai.exceptions import ModelHTTPError

    llm.queue("openai_error_400")
    with pytest.raises(ModelHTTPError) as raised:
        _agent(llm).run_sync(QUESTION)
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == type(raised.value).__qualname__  # re-raised unchanged


def test_the_recorded_conversation_is_restored_into_a_new_agent_that_continues_it(llm, checkpoint):
    _run(_agent(llm), "run_sync", llm)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "pydantic_ai"
    history = restored.restored
    assert [type(m) for m in history] == [ModelRequest, ModelResponse, ModelRequest, ModelResponse]
    (call,) = [p for p in history[1].parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.tool_call_id, call.args) == (
        "get_weather",
        "call_weather_1",
        {"city": "Paris"},
    )
    (result,) = [p for p in history[2].parts if isinstance(p, ToolReturnPart)]
    assert (result.tool_call_id, result.content) == ("call_weather_1", TOOL_OUTPUT)

    llm.reset()
    done = resume_and_continue(session, None, "And tomorrow?", agent)  # the server's default answer
    assert done.answer == "Hello! How can I help you today?"
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == QUESTION and sent[3]["tool_call_id"] == "call_weather_1"
    assert sent[4]["content"] == ANSWER and sent[-1]["content"] == "And tomorrow?"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
