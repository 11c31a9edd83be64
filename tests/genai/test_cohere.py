"""Cohere (the real ``cohere`` SDK's v2 client against the local server speaking Cohere's v2 chat
JSON and its typed SSE events): ``chat`` / ``chat_stream`` and their async forms make one
``chat {model}`` span each with the GenAI attributes, hand the caller exactly what the SDK
returns, and put the call's messages and a snapshot in the session; the run replays with the
server stopped. Under Pydantic AI's ``CohereModel`` the SDK call makes no span of its own."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from importlib.metadata import version
from typing import Any

import cohere
import pytest
import wrapt
from opentelemetry import trace
from opentelemetry.instrumentation.dependencies import get_dependency_conflicts
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent_trace as oat
from otel_agent_trace.instrumentation.cohere import CohereInstrumentor
from otel_agent_trace.model_replay import ModelReplayDivergence, ModelReplayRefused, model_replay
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import model_spans, one_model_span, strip_digests, uninstrumented
from tests.genai.replay_helpers import exchange_holders, exchanges_kept, record_then_replay

MODEL = "command-a-03-2025"
SYSTEM = {"role": "system", "content": "You answer weather questions."}
USER = {"role": "user", "content": "What's the weather in Paris?"}
ANSWER = "It is 18°C and sunny in Paris."
PLAN = "I will look up the weather in Paris."
CALL_ID = "get_weather_1byjy32y4hvq"
ARGUMENTS = '{"city":"Paris"}'
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

# -- Cohere's v2 wire format (recorded shapes) --------------------------------------------------


def _usage(billed: tuple[int, int], used: tuple[int, int]) -> dict[str, Any]:
    return {
        "billed_units": {"input_tokens": billed[0], "output_tokens": billed[1]},
        "tokens": {"input_tokens": used[0], "output_tokens": used[1]},
    }


TOOL_CALL_MESSAGE = {
    "role": "assistant",
    "tool_plan": PLAN,
    "tool_calls": [
        {"id": CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}
    ],
}
TOOL_CALL = {
    "status": 200,
    "json": {
        "id": "c14c80c3-tool-0001",
        "message": TOOL_CALL_MESSAGE,
        "finish_reason": "TOOL_CALL",
        "usage": _usage((37, 21), (1528, 56)),
    },
}
FINAL = {
    "status": 200,
    "json": {
        "id": "c14c80c3-final-0001",
        "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
        "finish_reason": "COMPLETE",
        "usage": _usage((52, 11), (1590, 13)),
    },
}


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "data": {"type": kind, **fields}}


def _start(ident: str) -> dict[str, Any]:
    empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    return _event("message-start", id=ident, delta={"message": empty})


def _end(finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    return _event("message-end", delta={"finish_reason": finish, "usage": usage})


TOOL_CALL_STREAM = {
    "status": 200,
    "sse": [
        _start("c14c80c3-stream-0002"),
        _event("tool-plan-delta", delta={"message": {"tool_plan": "I will look up "}}),
        _event("tool-plan-delta", delta={"message": {"tool_plan": "the weather in Paris."}}),
        _event(
            "tool-call-start",
            index=0,
            delta={
                "message": {
                    "tool_calls": {
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                }
            },
        ),
        _event(
            "tool-call-delta",
            index=0,
            delta={"message": {"tool_calls": {"function": {"arguments": '{"city":'}}}},
        ),
        _event(
            "tool-call-delta",
            index=0,
            delta={"message": {"tool_calls": {"function": {"arguments": '"Paris"}'}}}},
        ),
        _event("tool-call-end", index=0),
        _end("TOOL_CALL", _usage((37, 21), (1528, 56))),
    ],
}
FINAL_STREAM = {
    "status": 200,
    "sse": [
        _start("c14c80c3-stream-0001"),
        _event("content-start", index=0, delta={"message": {"content": {"type": "text", "text": ""}}}),
        _event("content-delta", index=0, delta={"message": {"content": {"text": "It is 18°C "}}}),
        _event("content-delta", index=0, delta={"message": {"content": {"text": "and sunny in Paris."}}}),
        _event("content-end", index=0),
        _end("COMPLETE", _usage((52, 11), (1590, 13))),
    ],
}
ERROR_401 = {"status": 401, "json": {"id": "err-0001", "message": "invalid api token"}}


@pytest.fixture(scope="module", autouse=True)
def cohere_instrumented(provider):
    inst = CohereInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


# (cohere 7 takes max_retries; 6.0, the floor, retries per request only: a 401 is not retried)
_TAKES_MAX_RETRIES = "max_retries" in inspect.signature(cohere.ClientV2.__init__).parameters
NO_RETRIES: dict[str, Any] = {"max_retries": 0} if _TAKES_MAX_RETRIES else {}


def _client(base_url: str | None) -> cohere.ClientV2:
    return cohere.ClientV2(api_key="co-test-key", base_url=base_url, **NO_RETRIES)


@pytest.fixture
def client(llm):
    return _client(llm.base_url)


@pytest.fixture
def async_client(llm):
    return cohere.AsyncClientV2(api_key="co-test-key", base_url=llm.base_url, **NO_RETRIES)


def test_chat_span_and_session(client, llm, checkpoint, memory_exporter):
    llm.queue(TOOL_CALL)
    response = client.chat(
        model=MODEL,
        messages=[SYSTEM, USER],
        tools=[TOOL],
        temperature=0.3,
        max_tokens=200,
        seed=7,
        k=40,
        p=0.9,
    )
    assert response.message.tool_calls[0].function.name == "get_weather"
    assert llm.requests[0]["path"] == "/v2/chat"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "cohere" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.temperature"] == 0.3 and a["gen_ai.request.max_tokens"] == 200
    assert a["gen_ai.request.seed"] == 7
    assert a["gen_ai.request.top_k"] == 40 and a["gen_ai.request.top_p"] == 0.9
    assert a["gen_ai.response.id"] == "c14c80c3-tool-0001"
    assert a["gen_ai.response.finish_reasons"] == ("TOOL_CALL",)
    # the tokens the model used (``usage.tokens``), not the billed units
    assert a["gen_ai.usage.input_tokens"] == 1528 and a["gen_ai.usage.output_tokens"] == 56
    assert a["agent_trace.tool_calls.ids"] == (CALL_ID,)
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "gen_ai.input.messages" not in a

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[:2] == [SYSTEM, USER]
    assert conversation[2] == TOOL_CALL_MESSAGE
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "cohere", "model_id": MODEL, "provider": "cohere"}


def test_stream_is_passed_through_and_assembled(client, llm, provider, checkpoint, memory_exporter):
    llm.queue(TOOL_CALL_STREAM)
    events = list(client.chat_stream(model=MODEL, messages=[USER], tools=[TOOL]))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue(TOOL_CALL_STREAM)
    plain = uninstrumented(
        CohereInstrumentor,
        provider,
        lambda: list(client.chat_stream(model=MODEL, messages=[USER], tools=[TOOL])),
    )
    assert events == plain and len(events) == 8  # the same events, in the same order
    assert llm.requests[0]["body"] == llm.requests[1]["body"]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "c14c80c3-stream-0002"
    assert a["gen_ai.response.finish_reasons"] == ("TOOL_CALL",)
    assert a["gen_ai.usage.input_tokens"] == 1528 and a["gen_ai.usage.output_tokens"] == 56
    assert a["agent_trace.tool_calls.ids"] == (CALL_ID,)
    # the streamed message is the one ``chat`` would have returned
    assert strip_digests(load_session(path).conversation())[-1] == TOOL_CALL_MESSAGE


def test_a_streamed_answer_is_the_message_chat_returns(client, llm, checkpoint):
    llm.queue(FINAL_STREAM)
    text = "".join(
        e.delta.message.content.text
        for e in client.chat_stream(model=MODEL, messages=[USER])
        if e.type == "content-delta"
    )
    assert text == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert strip_digests(load_session(path).conversation())[-1] == FINAL["json"]["message"]


def test_a_stream_left_early_ends_its_span(client, llm, memory_exporter):
    llm.queue(FINAL_STREAM)
    stream = client.chat_stream(model=MODEL, messages=[USER])
    assert next(iter(stream)).type == "message-start"
    stream.close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == "c14c80c3-stream-0001"


async def test_async_chat_and_stream(async_client, llm, memory_exporter):
    llm.queue(FINAL, FINAL_STREAM)
    response = await async_client.chat(model=MODEL, messages=[USER])
    stream = async_client.chat_stream(model=MODEL, messages=[USER])
    text = "".join([e.delta.message.content.text async for e in stream if e.type == "content-delta"])
    assert response.message.content[0].text == text == ANSWER
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.response.id"] == "c14c80c3-final-0001"
    assert "gen_ai.request.stream" not in plain.attributes
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ("COMPLETE",)
    assert streamed.attributes["gen_ai.usage.input_tokens"] == 1590


async def test_an_async_stream_left_early_ends_its_span(async_client, llm, memory_exporter):
    llm.queue(FINAL_STREAM)
    stream = async_client.chat_stream(model=MODEL, messages=[USER])
    assert (await anext(stream)).type == "message-start"
    await stream.aclose()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


@pytest.mark.parametrize("streamed", [False, True], ids=["chat", "chat_stream"])
def test_errors_are_raised_unchanged(client, llm, memory_exporter, streamed):
    llm.queue(ERROR_401)
    with pytest.raises(cohere.UnauthorizedError) as caught:
        if streamed:
            list(client.chat_stream(model=MODEL, messages=[USER]))
        else:
            client.chat(model=MODEL, messages=[USER])
    assert caught.value.status_code == 401 and caught.value.body == ERROR_401["json"]
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "UnauthorizedError"


def test_requests_are_the_same_with_and_without_us(client, llm, provider):
    llm.queue(TOOL_CALL, TOOL_CALL)
    kwargs: dict[str, Any] = {"model": MODEL, "messages": [SYSTEM, USER], "tools": [TOOL], "temperature": 0}
    ours = client.chat(**kwargs)
    plain = uninstrumented(CohereInstrumentor, provider, lambda: client.chat(**kwargs))
    assert ours == plain
    first, second = llm.requests
    assert first["body"] == second["body"]
    assert {k: v for k, v in first["headers"].items() if k.lower() != "traceparent"} == {
        k: v for k, v in second["headers"].items() if k.lower() != "traceparent"
    }


def test_no_message_text_in_the_shareable_tier(client, llm, checkpoint):
    planted = "planted-phrase-c0here"
    llm.queue(FINAL_STREAM)
    for _ in client.chat_stream(model=MODEL, messages=[{"role": "system", "content": planted}, USER]):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()


def _agent_run(base_url: str | None, question: str = USER["content"]) -> list[object]:
    """A tool-calling loop on the SDK: one agent span, two model calls (plain, then streamed)."""
    client = _client(base_url)
    with oat.agent("cohere-weather"):
        messages: list[Any] = [SYSTEM, {"role": "user", "content": question}]
        tools: list[Any] = [TOOL]
        first = client.chat(model=MODEL, messages=messages, tools=tools)
        message: Any = first.message
        messages.append(message)
        for call in message.tool_calls or ():
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "18°C, sunny"})
        text = _text(client.chat_stream(model=MODEL, messages=messages, tools=tools))
    return [message.dict(), text]


def _text(events: Any) -> str:
    """The answer's text from a stream's ``content-delta`` events."""
    return "".join(e.delta.message.content.text for e in events if e.type == "content-delta")


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(tmp_path, (TOOL_CALL, FINAL_STREAM), _agent_run)
    assert exchange_holders(path) == [f"chat {MODEL}", f"chat {MODEL}"]
    assert replayed == recorded and recorded[1] == ANSWER
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = [s.name for s in recorded_run]
    assert names.count(f"chat {MODEL}") == 2 and "invoke_agent cohere-weather" in names


def test_replay_reports_a_changed_prompt_and_never_sends_to_cohere(tmp_path):
    """Replayed, a changed question is a divergence whose diff names the message and the model
    span that held the recorded exchange; a client left on Cohere's own host is refused."""
    *_, path = record_then_replay(tmp_path, (TOOL_CALL, FINAL_STREAM), _agent_run)
    with exchanges_kept(), pytest.raises(ModelReplayDivergence) as caught, model_replay(path):
        _agent_run("http://127.0.0.1:9", "What's the weather in Lyon?")
    report = str(caught.value)
    assert f"span 'chat {MODEL}'" in report
    assert 'body.messages[1].content: recorded "What\'s the weather in Paris?"' in report
    with exchanges_kept(), model_replay(path) as player, pytest.raises(ModelReplayRefused):
        _agent_run("https://api.cohere.com")  # the client's default
    assert player.report()["refused"] == ["POST https://api.cohere.com/v2/chat"]


def _peer_wrapper(wrapped, instance, args, kwargs):
    """A peer's wrapper as OpenLLMetry's Cohere instrumentation puts one on ``ClientV2.chat``
    (``wrapt``, a CLIENT ``chat`` span)."""
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "cohere",
        "gen_ai.request.model": kwargs["model"],
    }
    with trace.get_tracer("peer.cohere").start_as_current_span(
        f"chat {kwargs['model']}", kind=SpanKind.CLIENT, attributes=attrs
    ):
        return wrapped(*args, **kwargs)


def test_a_peer_wrapping_the_client_v2_one_span_we_describe(llm, checkpoint, memory_exporter):
    wrapt.wrap_function_wrapper(cohere.ClientV2, "chat", _peer_wrapper)  # on the subclass, around ours
    try:
        llm.queue(FINAL)
        messages: list[Any] = [USER]
        _client(llm.base_url).chat(model=MODEL, messages=messages)  # (a client binds its chat when made)
    finally:
        del cohere.ClientV2.chat  # (the peer's wrapper was the subclass's own attribute)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    span = one_model_span(memory_exporter)
    assert span.instrumentation_scope.name == "peer.cohere"
    assert span.attributes["gen_ai.response.id"] == "c14c80c3-final-0001"  # described by us
    session = load_session(path)  # our content and snapshot went onto the peer's span
    assert strip_digests(session.conversation()) == [USER, FINAL["json"]["message"]]
    assert len(session.snapshots) == 1


def test_declared_versions_cover_the_installed_one():
    deps = CohereInstrumentor().instrumentation_dependencies()
    assert get_dependency_conflicts(deps) is None, f"cohere {version('cohere')} is outside {deps}"


_DEFERRED = textwrap.dedent(
    """
    import json, sys
    from otel_agent_trace.instrumentation.cohere import CohereInstrumentor

    CohereInstrumentor().instrument()
    at_start = [m for m in sys.modules if m == "cohere" or m.startswith("cohere.")]
    import cohere

    on_import = "cohere.v2.client" in sys.modules
    cohere.ClientV2(api_key="co-test-key")
    from cohere.v2.client import AsyncV2Client, V2Client

    names = ("chat", "chat_stream")
    wrapped = [hasattr(getattr(c, n), "__wrapped__") for c in (V2Client, AsyncV2Client) for n in names]
    print(json.dumps([at_start, on_import, wrapped]))
    """
)


def test_patched_when_the_agent_reaches_the_v2_client_not_at_start():
    """Instrumenting imports nothing of ``cohere``; the v2 client is patched when the agent first
    reaches it."""
    done = subprocess.run([sys.executable, "-c", _DEFERRED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], False, [True] * 4]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
      city: the city
    """
    return "18°C, sunny"


def test_under_pydantic_ai_one_span_per_model_call(llm, checkpoint, memory_exporter):
    """Pydantic AI's ``CohereModel`` calls ``chat`` of an ``AsyncClientV2``; with Pydantic AI's own
    instrumentation on, its model span is the call's: the SDK call adopts it (no second ``chat``
    span) and puts the call's messages in the session."""
    from pydantic_ai import Agent
    from pydantic_ai.models.cohere import CohereModel
    from pydantic_ai.providers.cohere import CohereProvider

    model = CohereModel(MODEL, provider=CohereProvider(api_key="co-test-key", base_url=llm.base_url))
    agent = Agent(model, name="weather")
    agent.instrument = True  # Pydantic AI's own spans, through the global tracer provider
    agent.tool_plain(get_weather)
    llm.queue(TOOL_CALL, FINAL)
    assert agent.run_sync("What's the weather in Paris?").output == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert [r["path"] for r in llm.requests] == ["/v2/chat"] * 2

    first, second = model_spans(memory_exporter)  # Pydantic AI's two, and no span of ours beside them
    for span, response_id in zip((first, second), ("c14c80c3-tool-0001", "c14c80c3-final-0001"), strict=True):
        assert span.name == f"chat {MODEL}" and span.instrumentation_scope.name == "pydantic-ai"
        assert span.attributes["gen_ai.response.id"] == response_id
    spans = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    (tool_span,) = [s for s in spans if s.name == "execute_tool get_weather"]
    assert tool_span.attributes["gen_ai.tool.call.id"] == CALL_ID
    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool", "assistant"]
    assert conversation[1]["tool_calls"][0]["id"] == conversation[2]["tool_call_id"] == CALL_ID
    assert conversation[3]["content"] == [{"type": "text", "text": ANSWER}]
    assert [s["description"] for s in session.snapshots] == [f"after chat {MODEL}"] * 2
