"""Mistral (the real ``mistralai`` SDK against the local server speaking Mistral's chat JSON and
SSE): ``chat.complete`` / ``chat.stream`` and their async forms make one ``chat {model}`` span
each with the GenAI attributes, hand the caller exactly what the SDK returns, and put the call's
messages and a snapshot in the session; the run replays with the server stopped. Under Strands'
``MistralModel`` the SDK call makes no span of its own: it describes Strands' claimed one."""

from __future__ import annotations

from typing import Any

import pytest
from mistralai.client import Mistral, errors
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent_trace as oat
from otel_agent_trace.instrumentation.mistral import MistralInstrumentor
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import model_spans, one_model_span, strip_digests, uninstrumented
from tests.genai.replay_helpers import exchange_holders, record_then_replay

MODEL = "mistral-small-latest"
SYSTEM = {"role": "system", "content": "You answer weather questions."}
USER = {"role": "user", "content": "What's the weather in Paris?"}
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture(scope="module", autouse=True)
def mistral_instrumented(provider):
    inst = MistralInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


def _client(base_url: str) -> Mistral:
    return Mistral(api_key="mistral-test-key", server_url=base_url)


@pytest.fixture
def client(llm):
    return _client(llm.base_url)


def test_complete_span_and_session(client, llm, checkpoint, memory_exporter):
    llm.queue("mistral_chat_tool_call")
    response = client.chat.complete(
        model=MODEL, messages=[SYSTEM, USER], tools=[TOOL], temperature=0.3, max_tokens=200, random_seed=7
    )
    assert response.choices[0].message.tool_calls[0].function.name == "get_weather"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "mistral_ai" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.temperature"] == 0.3 and a["gen_ai.request.max_tokens"] == 200
    assert a["gen_ai.request.seed"] == 7
    assert a["gen_ai.response.id"] == "cmpl-mistral-tool01" and a["gen_ai.response.model"] == MODEL
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert a["gen_ai.usage.input_tokens"] == 70 and a["gen_ai.usage.output_tokens"] == 18
    assert a["agent_trace.tool_calls.ids"] == ("D681PevKs",)
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "gen_ai.input.messages" not in a

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[:2] == [SYSTEM, USER]
    assert conversation[2]["tool_calls"][0]["id"] == "D681PevKs"
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "mistral_ai", "model_id": MODEL, "provider": "mistral_ai"}


def test_stream_is_passed_through_and_assembled(client, llm, provider, checkpoint, memory_exporter):
    llm.queue("mistral_chat_tool_call_stream")
    with client.chat.stream(model=MODEL, messages=[USER], tools=[TOOL]) as stream:
        events = list(stream)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue("mistral_chat_tool_call_stream")
    plain = uninstrumented(
        MistralInstrumentor,
        provider,
        lambda: list(client.chat.stream(model=MODEL, messages=[USER], tools=[TOOL])),
    )
    assert events == plain and len(events) == 2  # the same events, in the same order
    assert llm.requests[0]["body"] == llm.requests[1]["body"]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "cmpl-mistral-stream02"
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",) and a["gen_ai.usage.output_tokens"] == 18
    assert a["agent_trace.tool_calls.ids"] == ("D681PevKs",)
    last = strip_digests(load_session(path).conversation())[-1]
    assert last["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_a_stream_left_early_ends_its_span(client, llm, memory_exporter):
    llm.queue("mistral_chat_final_stream")
    stream = client.chat.stream(model=MODEL, messages=[USER])
    next(iter(stream))
    stream.close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


async def test_async_complete_and_stream(client, llm, memory_exporter):
    llm.queue("mistral_chat_final", "mistral_chat_final_stream")
    response = await client.chat.complete_async(model=MODEL, messages=[USER])
    stream = await client.chat.stream_async(model=MODEL, messages=[USER])
    text = "".join([e.data.choices[0].delta.content async for e in stream])
    assert response.choices[0].message.content == text == "It is 18°C and sunny in Paris."
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.response.id"] == "cmpl-mistral-final01"
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert streamed.attributes["gen_ai.usage.input_tokens"] == 95


def test_errors_are_raised_unchanged(client, llm, memory_exporter):
    llm.queue("mistral_error_401")
    with pytest.raises(errors.SDKError) as caught:
        client.chat.complete(model=MODEL, messages=[USER])
    assert caught.value.status_code == 401
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == type(caught.value).__name__


def test_requests_are_the_same_with_and_without_us(client, llm, provider):
    llm.queue("mistral_chat_tool_call", "mistral_chat_tool_call")
    ours = client.chat.complete(model=MODEL, messages=[SYSTEM, USER], tools=[TOOL], temperature=0)
    plain = uninstrumented(
        MistralInstrumentor,
        provider,
        lambda: client.chat.complete(model=MODEL, messages=[SYSTEM, USER], tools=[TOOL], temperature=0),
    )
    assert ours == plain
    first, second = llm.requests
    assert first["body"] == second["body"]
    assert {k: v for k, v in first["headers"].items() if k.lower() != "traceparent"} == {
        k: v for k, v in second["headers"].items() if k.lower() != "traceparent"
    }


def test_no_message_text_in_the_shareable_tier(client, llm, checkpoint):
    planted = "planted-phrase-m1stral"
    llm.queue("mistral_chat_final_stream")
    for _ in client.chat.stream(model=MODEL, messages=[{"role": "system", "content": planted}, USER]):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()


def _agent_run(base_url: str) -> list[object]:
    """A tool-calling loop on the SDK: one agent span, two model calls (plain, then streamed)."""
    client = _client(base_url)
    with oat.agent("mistral-weather"):
        messages: list[Any] = [SYSTEM, USER]
        tools: list[Any] = [TOOL]
        first = client.chat.complete(model=MODEL, messages=messages, tools=tools)
        message: Any = first.choices[0].message
        messages.append(message)
        for call in message.tool_calls or ():
            messages.append(
                {"role": "tool", "content": "18°C, sunny", "tool_call_id": call.id, "name": "get_weather"}
            )
        stream = client.chat.stream(model=MODEL, messages=messages, tools=tools)
        text = "".join(str(e.data.choices[0].delta.content or "") for e in stream)
    return [message.model_dump(), text]


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("mistral_chat_tool_call", "mistral_chat_final_stream"), _agent_run
    )
    assert exchange_holders(path) == [f"chat {MODEL}", f"chat {MODEL}"]
    assert replayed == recorded and recorded[1] == "It is 18°C and sunny in Paris."
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = [s.name for s in recorded_run]
    assert names.count(f"chat {MODEL}") == 2 and "invoke_agent mistral-weather" in names


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
      city: the city
    """
    return "18°C, sunny"


@pytest.mark.parametrize(
    ("stream", "recordings", "response_ids"),
    [
        (
            True,
            ("mistral_chat_tool_call_stream", "mistral_chat_final_stream"),
            ("cmpl-mistral-stream02", "cmpl-mistral-stream01"),
        ),
        (
            False,
            ("mistral_chat_tool_call", "mistral_chat_final"),
            ("cmpl-mistral-tool01", "cmpl-mistral-final01"),
        ),
    ],
    ids=["stream_async", "complete_async"],
)
def test_under_strands_one_span_per_model_call(
    llm, checkpoint, memory_exporter, stream, recordings, response_ids
):
    """Strands' ``MistralModel`` calls ``chat.stream_async`` (``complete_async`` with
    ``stream=False``) of a ``mistralai`` client inside its own model span: that span is claimed
    and describes the call (Mistral's response id, model, finish reason, usage, tool call ids),
    no second ``chat`` span is made."""
    from strands import Agent, tool
    from strands.models.mistral import MistralModel

    model = MistralModel(
        api_key="mistral-test-key", client_args={"server_url": llm.base_url}, model_id=MODEL, stream=stream
    )
    agent = Agent(model=model, tools=[tool(get_weather)], name="weather", callback_handler=None)
    llm.queue(*recordings)
    assert str(agent("What's the weather in Paris?")).strip() == "It is 18°C and sunny in Paris."
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert [r["path"] for r in llm.requests] == ["/v1/chat/completions"] * 2
    assert (llm.requests[0]["body"].get("stream") or False) is stream

    first, second = model_spans(memory_exporter)  # Strands' two, and no span of ours beside them
    for span, response_id in zip((first, second), response_ids, strict=True):
        a = span.attributes
        assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
        assert span.instrumentation_scope.name == "strands.telemetry.tracer"
        assert a["gen_ai.provider.name"] == "mistral_ai" and a["gen_ai.request.model"] == MODEL
        assert a["gen_ai.response.id"] == response_id and a["gen_ai.response.model"] == MODEL
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert first.attributes["gen_ai.usage.input_tokens"] == 70
    assert first.attributes["gen_ai.usage.output_tokens"] == 18
    assert first.attributes["agent_trace.tool_calls.ids"] == ("D681PevKs",)
    assert first.attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    spans = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    (agent_span,) = [s for s in spans if s.name == "invoke_agent weather"]
    assert {first.parent.span_id, second.parent.span_id} <= {s.context.span_id for s in spans}
    assert agent_span.context.trace_id == first.context.trace_id

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert [m["role"] for m in conversation] == ["user", "assistant", "user", "assistant"]
    assert conversation[1]["content"][0]["toolUse"]["toolUseId"] == "D681PevKs"
    assert conversation[2]["content"][0]["toolResult"]["content"] == [{"text": "18°C, sunny"}]
    assert conversation[3]["content"] == [{"text": "It is 18°C and sunny in Paris."}]
    snaps = session.snapshots  # one after each model call (Strands' claimed span), one after the run
    assert [s["description"] for s in snaps] == [f"after chat {MODEL}"] * 2 + ["after invoke_agent weather"]
    assert {s["model_info"]["provider"] for s in snaps} == {"mistral_ai"}


def test_under_pydantic_ai_one_span_per_model_call(llm, checkpoint, memory_exporter):
    """Pydantic AI's ``MistralModel`` calls ``chat.complete_async`` of a ``mistralai`` client; with
    Pydantic AI's own instrumentation on, its model span is the call's: the SDK call adopts it (no
    second ``chat`` span) and puts the call's messages in the session."""
    from pydantic_ai import Agent
    from pydantic_ai.models.mistral import MistralModel
    from pydantic_ai.providers.mistral import MistralProvider

    model = MistralModel(MODEL, provider=MistralProvider(api_key="mistral-test-key", base_url=llm.base_url))
    agent = Agent(model, name="weather")
    agent.instrument = True  # Pydantic AI's own spans, through the global tracer provider
    agent.tool_plain(get_weather)
    llm.queue("mistral_chat_tool_call", "mistral_chat_final")
    assert agent.run_sync("What's the weather in Paris?").output == "It is 18°C and sunny in Paris."
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert [r["path"] for r in llm.requests] == ["/v1/chat/completions"] * 2

    first, second = model_spans(memory_exporter)  # Pydantic AI's two, and no span of ours beside them
    for span, response_id in zip(
        (first, second), ("cmpl-mistral-tool01", "cmpl-mistral-final01"), strict=True
    ):
        assert span.name == f"chat {MODEL}" and span.instrumentation_scope.name == "pydantic-ai"
        assert span.attributes["gen_ai.response.id"] == response_id
    spans = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    (tool_span,) = [s for s in spans if s.name == "execute_tool get_weather"]
    assert tool_span.attributes["gen_ai.tool.call.id"] == "D681PevKs"
    session = load_session(path)
    conversation = strip_digests(session.conversation())
    # the messages as the SDK was sent them (Pydantic AI's tool call id), its answers
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool", "assistant"]
    assert conversation[1]["tool_calls"][0]["id"] == conversation[2]["tool_call_id"] == "D681PevKs"
    assert conversation[3]["content"] == "It is 18°C and sunny in Paris."
    assert [s["description"] for s in session.snapshots] == [f"after chat {MODEL}"] * 2
