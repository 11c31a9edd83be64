"""Groq (the real ``groq`` SDK against the local server speaking Groq's OpenAI-shaped chat JSON
and SSE, with its ``x_groq`` extension): ``chat.completions.create``, sync and async, streamed or
not, makes one ``chat {model}`` span each with the GenAI attributes, hands the caller exactly what
the SDK returns, and puts the call's messages and a snapshot in the session; the run replays with
the server stopped. Under Pydantic AI's ``GroqModel`` the SDK call makes no span of its own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.metadata import version
from typing import Any

import groq
import pytest
import wrapt
from opentelemetry import trace
from opentelemetry.instrumentation.dependencies import get_dependency_conflicts
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent_trace as oat
from otel_agent_trace.instrumentation.groq import GroqInstrumentor
from otel_agent_trace.model_replay import ModelReplayDivergence, ModelReplayRefused, model_replay
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import model_spans, one_model_span, strip_digests, uninstrumented
from tests.genai.replay_helpers import exchange_holders, exchanges_kept, record_then_replay

MODEL = "llama-3.3-70b-versatile"
SYSTEM = {"role": "system", "content": "You answer weather questions."}
USER = {"role": "user", "content": "What's the weather in Paris?"}
ANSWER = "It is 18°C and sunny in Paris."
CALL_ID = "call_d5wg"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

# -- Groq's wire format (recorded shapes: ``usage`` with Groq's timings, ``x_groq`` with the
# request id; a stream's usage in its last chunk's ``x_groq``) ---------------------------------


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "queue_time": 0.021,
        "prompt_tokens": prompt,
        "prompt_time": 0.012,
        "completion_tokens": completion,
        "completion_time": 0.061,
        "total_tokens": prompt + completion,
        "total_time": 0.073,
    }


def _completion(ident: str, message: dict[str, Any], finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": 200,
        "json": {
            "id": ident,
            "object": "chat.completion",
            "created": 1764500000,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": usage,
            "system_fingerprint": "fp_4e3bd0c2f4",
            "x_groq": {"id": f"req_{ident}"},
        },
    }


def _chunk(ident: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "data": {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": 1764500001,
            "model": MODEL,
            "system_fingerprint": "fp_4e3bd0c2f4",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
    }


def _stream(ident: str, deltas: list[dict[str, Any]], finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    first = _chunk(ident, {"role": "assistant", "content": ""}, x_groq={"id": f"req_{ident}"})
    body = [_chunk(ident, delta) for delta in deltas]
    last = _chunk(ident, {}, finish, x_groq={"id": f"req_{ident}", "usage": usage})
    return {"status": 200, "sse": [first, *body, last, {"data": "[DONE]"}]}


TOOL_CALL_MESSAGE = {
    "role": "assistant",
    "tool_calls": [
        {
            "id": CALL_ID,
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ],
}
TOOL_CALL = _completion("chatcmpl-groq-tool01", TOOL_CALL_MESSAGE, "tool_calls", _usage(224, 18))
FINAL = _completion(
    "chatcmpl-groq-final01", {"role": "assistant", "content": ANSWER}, "stop", _usage(262, 12)
)
TOOL_CALL_STREAM = _stream(
    "chatcmpl-groq-stream02",
    [{"tool_calls": [{"index": 0, **TOOL_CALL_MESSAGE["tool_calls"][0]}]}],
    "tool_calls",
    _usage(224, 18),
)
FINAL_STREAM = _stream(
    "chatcmpl-groq-stream01",
    [
        {"reasoning": "The tool said 18°C"},
        {"reasoning": ", sunny."},
        {"content": "It is 18°C "},
        {"content": "and sunny in Paris."},
    ],
    "stop",
    _usage(262, 12),
)
ERROR_401 = {
    "status": 401,
    "json": {
        "error": {"message": "Invalid API Key", "type": "invalid_request_error", "code": "invalid_api_key"}
    },
}


@pytest.fixture(scope="module", autouse=True)
def groq_instrumented(provider):
    inst = GroqInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


@pytest.fixture
def client(llm):
    return groq.Groq(api_key="gsk-test", base_url=llm.base_url, max_retries=0)


@pytest.fixture
def async_client(llm):
    return groq.AsyncGroq(api_key="gsk-test", base_url=llm.base_url, max_retries=0)


def test_create_span_and_session(client, llm, checkpoint, memory_exporter):
    llm.queue(TOOL_CALL)
    response = client.chat.completions.create(
        model=MODEL,
        messages=[SYSTEM, USER],
        tools=[TOOL],
        temperature=0.3,
        max_completion_tokens=200,
        seed=7,
    )
    assert response.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert llm.requests[0]["path"] == "/openai/v1/chat/completions"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "groq" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.temperature"] == 0.3 and a["gen_ai.request.max_tokens"] == 200
    assert a["gen_ai.request.seed"] == 7
    assert a["gen_ai.response.id"] == "chatcmpl-groq-tool01" and a["gen_ai.response.model"] == MODEL
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert a["gen_ai.usage.input_tokens"] == 224 and a["gen_ai.usage.output_tokens"] == 18
    assert a["agent_trace.tool_calls.ids"] == (CALL_ID,)
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "gen_ai.input.messages" not in a

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[:2] == [SYSTEM, USER]
    assert conversation[2]["tool_calls"][0]["id"] == CALL_ID
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "groq", "model_id": MODEL, "provider": "groq"}


def test_stream_is_passed_through_and_assembled(client, llm, provider, checkpoint, memory_exporter):
    llm.queue(TOOL_CALL_STREAM)
    chunks = list(client.chat.completions.create(model=MODEL, messages=[USER], tools=[TOOL], stream=True))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue(TOOL_CALL_STREAM)
    plain = uninstrumented(
        GroqInstrumentor,
        provider,
        lambda: list(client.chat.completions.create(model=MODEL, messages=[USER], tools=[TOOL], stream=True)),
    )
    assert chunks == plain and len(chunks) == 3  # the same chunks, in the same order
    assert llm.requests[0]["body"] == llm.requests[1]["body"]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "chatcmpl-groq-stream02"
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    # Groq reports a stream's usage in its last chunk's ``x_groq``
    assert a["gen_ai.usage.input_tokens"] == 224 and a["gen_ai.usage.output_tokens"] == 18
    assert a["agent_trace.tool_calls.ids"] == (CALL_ID,)
    last = strip_digests(load_session(path).conversation())[-1]
    assert last["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_a_streamed_answer_keeps_its_reasoning_as_a_whole_response_does(client, llm, checkpoint):
    llm.queue(FINAL_STREAM)
    stream = client.chat.completions.create(model=MODEL, messages=[USER], stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream)
    assert text == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    last = strip_digests(load_session(path).conversation())[-1]
    assert last == {"role": "assistant", "content": ANSWER, "reasoning": "The tool said 18°C, sunny."}


def test_a_stream_left_early_ends_its_span(client, llm, memory_exporter):
    llm.queue(FINAL_STREAM)
    stream = client.chat.completions.create(model=MODEL, messages=[USER], stream=True)
    next(iter(stream))
    stream.close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


async def test_async_create_and_stream(async_client, llm, memory_exporter):
    llm.queue(FINAL, FINAL_STREAM)
    response = await async_client.chat.completions.create(model=MODEL, messages=[USER])
    stream = await async_client.chat.completions.create(model=MODEL, messages=[USER], stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream])
    assert response.choices[0].message.content == text == ANSWER
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.response.id"] == "chatcmpl-groq-final01"
    assert "gen_ai.request.stream" not in plain.attributes
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert streamed.attributes["gen_ai.usage.input_tokens"] == 262


def test_raw_and_streaming_responses_are_read_when_parsed(client, llm, memory_exporter):
    llm.queue(TOOL_CALL, FINAL_STREAM)
    raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=[USER], tools=[TOOL])
    assert raw.http_request.url.path == "/openai/v1/chat/completions"
    assert raw.parse().choices[0].finish_reason == "tool_calls"
    with client.chat.completions.with_streaming_response.create(
        model=MODEL, messages=[USER], stream=True
    ) as response:
        text = "".join(c.choices[0].delta.content or "" for c in response.parse())
    assert text == ANSWER
    first, second = model_spans(memory_exporter)
    assert first.attributes["gen_ai.response.id"] == "chatcmpl-groq-tool01"
    assert first.attributes["agent_trace.tool_calls.ids"] == (CALL_ID,)
    assert second.attributes["gen_ai.response.id"] == "chatcmpl-groq-stream01"
    assert second.attributes["gen_ai.usage.output_tokens"] == 12


def test_errors_are_raised_unchanged(client, llm, memory_exporter):
    llm.queue(ERROR_401)
    with pytest.raises(groq.AuthenticationError) as caught:
        client.chat.completions.create(model=MODEL, messages=[USER])
    assert caught.value.status_code == 401
    assert caught.value.body == ERROR_401["json"]
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "AuthenticationError"


def test_requests_are_the_same_with_and_without_us(client, llm, provider):
    llm.queue(TOOL_CALL, TOOL_CALL)
    kwargs: dict[str, Any] = {"model": MODEL, "messages": [SYSTEM, USER], "tools": [TOOL], "temperature": 0}
    ours = client.chat.completions.create(**kwargs)
    plain = uninstrumented(GroqInstrumentor, provider, lambda: client.chat.completions.create(**kwargs))
    assert ours == plain
    first, second = llm.requests
    assert first["body"] == second["body"]
    assert {k: v for k, v in first["headers"].items() if k.lower() != "traceparent"} == {
        k: v for k, v in second["headers"].items() if k.lower() != "traceparent"
    }


def test_no_message_text_in_the_shareable_tier(client, llm, checkpoint):
    planted = "planted-phrase-gr0q"
    llm.queue(FINAL_STREAM)
    messages: list[Any] = [{"role": "system", "content": planted}, USER]
    for _ in client.chat.completions.create(model=MODEL, messages=messages, stream=True):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()


def _agent_run(base_url: str | None, question: str = USER["content"]) -> list[object]:
    """A tool-calling loop on the SDK: one agent span, two model calls (plain, then streamed)."""
    client = groq.Groq(api_key="gsk-test", base_url=base_url, max_retries=0)
    with oat.agent("groq-weather"):
        messages: list[Any] = [SYSTEM, {"role": "user", "content": question}]
        tools: list[Any] = [TOOL]
        first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        message: Any = first.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or ():
            messages.append({"role": "tool", "content": "18°C, sunny", "tool_call_id": call.id})
        stream = client.chat.completions.create(model=MODEL, messages=messages, tools=tools, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream)
    return [message.model_dump(), text]


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(tmp_path, (TOOL_CALL, FINAL_STREAM), _agent_run)
    assert exchange_holders(path) == [f"chat {MODEL}", f"chat {MODEL}"]
    assert replayed == recorded and recorded[1] == ANSWER
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = [s.name for s in recorded_run]
    assert names.count(f"chat {MODEL}") == 2 and "invoke_agent groq-weather" in names


def test_replay_reports_a_changed_prompt_and_never_sends_to_groq(tmp_path, monkeypatch):
    """Replayed, a changed question is a divergence whose diff names the message and the model
    span that held the recorded exchange; a client left on Groq's own host is refused, not sent."""
    *_, path = record_then_replay(tmp_path, (TOOL_CALL, FINAL_STREAM), _agent_run)
    with exchanges_kept(), pytest.raises(ModelReplayDivergence) as caught, model_replay(path):
        _agent_run("http://127.0.0.1:9", "What's the weather in Lyon?")
    report = str(caught.value)
    assert f"span 'chat {MODEL}'" in report
    assert 'body.messages[1].content: recorded "What\'s the weather in Paris?"' in report
    monkeypatch.delenv("GROQ_BASE_URL", raising=False)
    with exchanges_kept(), model_replay(path) as player, pytest.raises(ModelReplayRefused):
        _agent_run(None)  # the client's default: https://api.groq.com
    assert player.report()["refused"] == ["POST https://api.groq.com/openai/v1/chat/completions"]


PEER_SCOPE = "peer.groq"


def _peer_wrapper(wrapped, instance, args, kwargs):
    """A peer's wrapper of ``Completions.create`` as OpenLLMetry's Groq instrumentation wraps it
    (``wrapt``, a CLIENT ``chat`` span)."""
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "groq",
        "gen_ai.request.model": kwargs["model"],
    }
    with trace.get_tracer(PEER_SCOPE).start_as_current_span(
        f"chat {kwargs['model']}", kind=SpanKind.CLIENT, attributes=attrs
    ):
        return wrapped(*args, **kwargs)


def test_a_peer_wrapped_before_us_one_span_ours(client, llm, provider, memory_exporter):
    import groq.resources.chat.completions as module

    GroqInstrumentor().uninstrument()
    wrapt.wrap_function_wrapper(module, "Completions.create", _peer_wrapper)
    ours = GroqInstrumentor()
    ours.instrument(tracer_provider=provider)  # ours wraps around the peer's wrapper
    try:
        assert ours.foreign == ["groq.resources.chat.completions.Completions.create"]
        llm.queue(FINAL)
        assert client.chat.completions.create(model=MODEL, messages=[USER]).id == "chatcmpl-groq-final01"
    finally:
        ours.uninstrument()
        unwrap(module.Completions, "create")
        ours.instrument(tracer_provider=provider)
    span = one_model_span(memory_exporter)
    assert span.instrumentation_scope.name == "otel_agent_trace"
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-groq-final01"


def test_a_peer_wrapped_after_us_one_span_we_adopt(client, llm, checkpoint, memory_exporter):
    import groq.resources.chat.completions as module

    wrapt.wrap_function_wrapper(module, "Completions.create", _peer_wrapper)
    try:
        llm.queue(FINAL)
        client.chat.completions.create(model=MODEL, messages=[USER])
    finally:
        unwrap(module.Completions, "create")
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    span = one_model_span(memory_exporter)
    assert span.instrumentation_scope.name == PEER_SCOPE
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-groq-final01"  # described by us
    session = load_session(path)  # our content and snapshot went onto the peer's span
    assert [m["content"] for m in session.conversation()] == [USER["content"], ANSWER]
    assert len(session.snapshots) == 1


def test_declared_versions_cover_the_installed_one():
    deps = GroqInstrumentor().instrumentation_dependencies()
    assert get_dependency_conflicts(deps) is None, f"groq {version('groq')} is outside {deps}"


_DEFERRED = textwrap.dedent(
    """
    import json, sys
    from otel_agent_trace.instrumentation.groq import GroqInstrumentor

    GroqInstrumentor().instrument()
    at_start = [m for m in sys.modules if m == "groq" or m.startswith("groq.")]
    import groq

    client = groq.Groq(api_key="gsk-test")
    on_import = "groq.resources.chat.completions" in sys.modules
    client.chat.completions
    from groq.resources.chat.completions import AsyncCompletions, Completions

    wrapped = [hasattr(c.create, "__wrapped__") for c in (Completions, AsyncCompletions)]
    print(json.dumps([at_start, on_import, wrapped]))
    """
)


def test_patched_when_the_agent_reaches_chat_not_at_start():
    """Instrumenting imports nothing of ``groq``; the chat resource is patched when the agent
    first reaches it (``client.chat`` imports it)."""
    done = subprocess.run([sys.executable, "-c", _DEFERRED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], False, [True, True]]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
      city: the city
    """
    return "18°C, sunny"


def test_under_pydantic_ai_one_span_per_model_call(llm, checkpoint, memory_exporter):
    """Pydantic AI's ``GroqModel`` calls ``chat.completions.create`` of an ``AsyncGroq`` client;
    with Pydantic AI's own instrumentation on, its model span is the call's: the SDK call adopts
    it (no second ``chat`` span) and puts the call's messages in the session."""
    from pydantic_ai import Agent
    from pydantic_ai.models.groq import GroqModel
    from pydantic_ai.providers.groq import GroqProvider

    model = GroqModel(MODEL, provider=GroqProvider(api_key="gsk-test", base_url=llm.base_url))
    agent = Agent(model, name="weather")
    agent.instrument = True  # Pydantic AI's own spans, through the global tracer provider
    agent.tool_plain(get_weather)
    llm.queue(TOOL_CALL, FINAL)
    assert agent.run_sync("What's the weather in Paris?").output == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert [r["path"] for r in llm.requests] == ["/openai/v1/chat/completions"] * 2

    first, second = model_spans(memory_exporter)  # Pydantic AI's two, and no span of ours beside them
    for span, response_id in zip(
        (first, second), ("chatcmpl-groq-tool01", "chatcmpl-groq-final01"), strict=True
    ):
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
    assert conversation[3]["content"] == ANSWER
    assert [s["description"] for s in session.snapshots] == [f"after chat {MODEL}"] * 2
