"""Anthropic SDK (real client, local replay server): messages.create sync/async/streamed and the
messages.stream helper make one ``chat {model}`` span each; the SDK's own call span is not
duplicated."""

from __future__ import annotations

import gc

import anthropic
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tests.genai.genai_helpers import model_spans, one_model_span

USER = [{"role": "user", "content": "Hi there"}]
MODEL = "claude-test"


def test_create_has_semconv_attributes(anthropic_client, memory_exporter):
    msg = anthropic_client.messages.create(
        model=MODEL, max_tokens=100, messages=USER, system="Be brief.", stop_sequences=["END"]
    )
    assert msg.content[0].text == "Hello! How can I help?"
    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "anthropic" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.max_tokens"] == 100  # anthropic 2.x has no temperature/top_k any more
    assert a["gen_ai.request.stop_sequences"] == ("END",)
    assert a["gen_ai.response.model"] == "claude-sonnet-4-5-20250929"
    assert a["gen_ai.response.id"] == "msg_01Text"
    assert a["gen_ai.response.finish_reasons"] == ("end_turn",)
    # input_tokens counts cached tokens too (12 uncached + 3 read from the cache)
    assert a["gen_ai.usage.input_tokens"] == 15 and a["gen_ai.usage.cache_read.input_tokens"] == 3
    assert a["gen_ai.usage.output_tokens"] == 8


def test_sdk_native_span_is_not_duplicated(anthropic_client, memory_exporter):
    anthropic_client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    names = [s.name for s in memory_exporter.get_finished_spans()]
    assert names == [f"chat {MODEL}"]  # no "anthropic.messages.create" beside it


def test_tool_use_stream_is_assembled(anthropic_client, llm, memory_exporter):
    llm.queue("anthropic_messages_tool_use_stream")
    stream = anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True)
    assert isinstance(stream, anthropic.Stream)
    kinds = [e.type for e in stream]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    span = one_model_span(memory_exporter)
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert span.attributes["agent_trace.tool_calls.ids"] == ("toolu_01Weather",)
    assert span.attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    assert span.attributes["gen_ai.usage.output_tokens"] == 40
    assert span.attributes["gen_ai.response.time_to_first_chunk"] >= 0


def test_stream_helper(anthropic_client, memory_exporter):
    with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello! How can I help?" and final.id == "msg_01Strm"
    span = one_model_span(memory_exporter)
    assert span.attributes["gen_ai.response.id"] == "msg_01Strm"
    assert span.attributes["gen_ai.request.stream"] is True
    assert "agent_trace.stream.abandoned" not in span.attributes


@pytest.mark.parametrize("how", ["helper-break", "close", "dropped"])
def test_abandoned_stream_ends_span(anthropic_client, memory_exporter, how):
    if how == "helper-break":
        with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            for _ in stream:
                break
    elif how == "close":
        stream = anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True)
        next(iter(stream))
        stream.close()
    else:
        stream = anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True)
        next(iter(stream))
        del stream
        gc.collect()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == "msg_01Strm"


@pytest.mark.parametrize(
    "recording, exc_type",
    [
        ("anthropic_error_529", anthropic.InternalServerError),
        ("anthropic_error_400", anthropic.BadRequestError),
    ],
)
def test_errors_are_reraised_unchanged(anthropic_client, llm, memory_exporter, recording, exc_type):
    llm.queue(recording)
    with pytest.raises(exc_type) as info:
        anthropic_client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == type(info.value).__qualname__
    assert any(e.name == "exception" for e in span.events)


async def test_async_create_stream_and_helper(async_anthropic_client, llm, memory_exporter):
    msg = await async_anthropic_client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert msg.id == "msg_01Text"
    stream = await async_anthropic_client.messages.create(
        model=MODEL, max_tokens=10, messages=USER, stream=True
    )
    assert isinstance(stream, anthropic.AsyncStream)
    assert [e.type async for e in stream][-1] == "message_stop"
    llm.queue("anthropic_messages_tool_use_stream")
    async with async_anthropic_client.messages.stream(model=MODEL, max_tokens=10, messages=USER) as helper:
        final = await helper.get_final_message()
    assert final.content[1].name == "get_weather"
    spans = model_spans(memory_exporter)
    assert [s.attributes["gen_ai.response.id"] for s in spans] == ["msg_01Text", "msg_01Strm", "msg_01ToolS"]
    assert spans[2].attributes["agent_trace.tool_calls.ids"] == ("toolu_01Weather",)


def test_parse_and_beta_messages_are_covered(anthropic_client, llm, memory_exporter):
    anthropic_client.messages.parse(model=MODEL, max_tokens=10, messages=USER)
    anthropic_client.beta.messages.create(model=MODEL, max_tokens=10, messages=USER)
    llm.queue("anthropic_messages_tool_use_stream")
    with anthropic_client.beta.messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream:
        final = stream.get_final_message()
    assert final.content[1].name == "get_weather"
    spans = model_spans(memory_exporter)
    assert [s.attributes["gen_ai.response.id"] for s in spans] == ["msg_01Text", "msg_01Text", "msg_01ToolS"]
    assert [s.name for s in memory_exporter.get_finished_spans()] == [f"chat {MODEL}"] * 3


def test_content_on_span_uses_semconv_parts(anthropic_client, llm, memory_exporter, capture):
    import json

    capture("SPAN_AND_EVENT")
    llm.queue("anthropic_messages_tool_use")
    anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=USER, system="Be brief.")
    span = one_model_span(memory_exporter)
    out = json.loads(span.attributes["gen_ai.output.messages"])
    assert out[0]["parts"] == [
        {"type": "text", "content": "Let me check the weather."},
        {"type": "tool_call", "id": "toolu_01Weather", "name": "get_weather", "arguments": {"city": "Paris"}},
    ]
    assert json.loads(span.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Hi there"}]}
    ]
    assert json.loads(span.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    (event,) = [e for e in span.events if e.name == "gen_ai.client.inference.operation.details"]
    assert event.attributes["gen_ai.output.messages"] == span.attributes["gen_ai.output.messages"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("path", ["with_raw_response", "with_streaming_response"])
def test_raw_response_calls_have_the_response_facts(anthropic_client, memory_exporter, path, stream):
    """``messages.with_raw_response.create`` / ``with_streaming_response.create``: the span ends
    when the parsed message (or stream) does, with the facts of a plain ``create``."""
    kwargs = {"model": MODEL, "max_tokens": 10, "messages": USER, "stream": stream}
    if path == "with_raw_response":
        parsed = anthropic_client.messages.with_raw_response.create(**kwargs).parse()
        if stream:
            assert [e.type for e in parsed][-1] == "message_stop"
    else:
        with anthropic_client.messages.with_streaming_response.create(**kwargs) as raw:
            parsed = raw.parse()
            if stream:  # read while the response is open
                assert [e.type for e in parsed][-1] == "message_stop"
    span = one_model_span(memory_exporter)
    assert span.attributes["gen_ai.response.id"] == ("msg_01Strm" if stream else "msg_01Text")
    assert span.attributes["gen_ai.response.model"] and span.attributes["gen_ai.usage.output_tokens"] > 0


async def test_async_raw_response_call_has_the_response_facts(async_anthropic_client, memory_exporter):
    raw = await async_anthropic_client.messages.with_raw_response.create(
        model=MODEL, max_tokens=10, messages=USER
    )
    assert (await raw.parse()).id == "msg_01Text"
    assert one_model_span(memory_exporter).attributes["gen_ai.response.id"] == "msg_01Text"
