"""OpenAI SDK (real client, local replay server): one CLIENT span per model call with the GenAI
attributes, for create / stream / stream helpers, sync and async, chat and responses."""

from __future__ import annotations

import gc

import openai
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tests.genai.genai_helpers import model_spans, one_model_span

USER = [{"role": "user", "content": "Hi there"}]


def test_chat_create_has_semconv_attributes(openai_client, memory_exporter):
    resp = openai_client.chat.completions.create(
        model="gpt-4o-mini", messages=USER, temperature=0.2, top_p=0.9, max_tokens=50, seed=7, stop=["END"]
    )
    assert resp.choices[0].message.content == "Hello! How can I help you today?"
    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == "chat gpt-4o-mini" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.request.model"] == "gpt-4o-mini"
    assert a["gen_ai.request.temperature"] == 0.2 and a["gen_ai.request.top_p"] == 0.9
    assert a["gen_ai.request.max_tokens"] == 50 and a["gen_ai.request.seed"] == 7
    assert a["gen_ai.request.stop_sequences"] == ("END",)
    assert a["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert a["gen_ai.response.id"] == "chatcmpl-text001"
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == 19 and a["gen_ai.usage.output_tokens"] == 9
    assert a["gen_ai.usage.cache_read.input_tokens"] == 4
    assert a["gen_ai.usage.reasoning.output_tokens"] == 0
    assert "gen_ai.input.messages" not in a  # content is off by default
    assert span.status.status_code is StatusCode.UNSET


def test_tool_calls_are_named_with_their_ids(openai_client, llm, memory_exporter):
    llm.queue("openai_chat_tool_call")
    resp = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, tools=[])
    assert resp.choices[0].message.tool_calls[0].id == "call_weather_1"
    span = one_model_span(memory_exporter)
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert span.attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert span.attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    assert not span.events  # the ids and names above say it all: no event repeats them


def test_stream_passes_through_and_ends_span_on_exhaustion(openai_client, memory_exporter):
    stream = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True)
    assert isinstance(stream, openai.Stream)
    assert stream.response.status_code == 200
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Hello! How can I help you today?"
    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True
    assert a["gen_ai.response.id"] == "chatcmpl-strm001"
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.output_tokens"] == 9
    assert a["gen_ai.response.time_to_first_chunk"] >= 0
    assert "agent_trace.stream.abandoned" not in a


def test_streamed_tool_call_is_assembled(openai_client, llm, memory_exporter):
    llm.queue("openai_chat_tool_call_stream")
    with openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True) as stream:
        chunks = list(stream)
    assert chunks[0].choices[0].delta.tool_calls[0].id == "call_weather_1"
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert span.attributes["agent_trace.tool_calls.names"] == ("get_weather",)


def test_stream_helper_is_covered(openai_client, memory_exporter):
    with openai_client.chat.completions.stream(model="gpt-4o-mini", messages=USER) as stream:
        events = [e.type for e in stream]
        final = stream.get_final_completion()
    assert "content.done" in events
    assert final.choices[0].message.content == "Hello! How can I help you today?"
    span = one_model_span(memory_exporter)
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-strm001"


@pytest.mark.parametrize("how", ["break+close", "context-exit", "helper-break", "dropped"])
def test_abandoned_stream_still_ends_its_span(openai_client, memory_exporter, how):
    if how == "break+close":
        stream = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True)
        for _ in stream:
            break
        stream.close()
    elif how == "context-exit":
        with openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True) as stream:
            next(stream)
            next(stream)
    elif how == "helper-break":
        with openai_client.chat.completions.stream(model="gpt-4o-mini", messages=USER) as stream:
            for _ in stream:
                break
    else:
        stream = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True)
        next(stream)
        next(stream)
        del stream
        gc.collect()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-strm001"  # what was received so far
    assert span.end_time is not None


@pytest.mark.parametrize(
    "recording, exc_type, status",
    [
        ("openai_error_500", openai.InternalServerError, 500),
        ("openai_error_400", openai.BadRequestError, 400),
    ],
)
def test_http_errors_are_reraised_unchanged_and_marked(
    openai_client, llm, memory_exporter, recording, exc_type, status
):
    llm.queue(recording)
    with pytest.raises(exc_type) as info:
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert type(info.value) is exc_type and info.value.status_code == status
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == exc_type.__qualname__
    assert [e.name for e in span.events] == ["exception"]


async def test_async_chat_and_stream(async_openai_client, memory_exporter):
    resp = await async_openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert resp.id == "chatcmpl-text001"
    stream = await async_openai_client.chat.completions.create(
        model="gpt-4o-mini", messages=USER, stream=True
    )
    assert isinstance(stream, openai.AsyncStream)
    pieces = [c.choices[0].delta.content async for c in stream if c.choices]
    assert "".join(p or "" for p in pieces) == "Hello! How can I help you today?"
    async with async_openai_client.chat.completions.stream(model="gpt-4o-mini", messages=USER) as helper:
        async for _ in helper:
            break
    spans = model_spans(memory_exporter)
    assert [s.attributes["gen_ai.response.id"] for s in spans] == ["chatcmpl-text001"] + [
        "chatcmpl-strm001"
    ] * 2
    assert "agent_trace.stream.abandoned" not in spans[1].attributes
    assert spans[2].attributes["agent_trace.stream.abandoned"] is True


async def test_async_error_is_reraised(async_openai_client, llm, memory_exporter):
    llm.queue("openai_error_500")
    with pytest.raises(openai.InternalServerError):
        await async_openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert one_model_span(memory_exporter).status.status_code is StatusCode.ERROR


def test_responses_create_and_stream(openai_client, memory_exporter):
    resp = openai_client.responses.create(
        model="gpt-4o-mini", input="Hi", instructions="Be brief.", max_output_tokens=30
    )
    assert resp.output_text == "Hello from the Responses API."
    with openai_client.responses.stream(model="gpt-4o-mini", input="Hi") as stream:
        for _ in stream:
            pass
        assert stream.get_final_response().output_text == "Hello from the Responses API."
    plain, streamed = model_spans(memory_exporter)
    assert plain.name == "chat gpt-4o-mini"
    assert plain.attributes["gen_ai.request.max_tokens"] == 30
    assert plain.attributes["gen_ai.response.id"] == "resp_text001"
    assert plain.attributes["gen_ai.usage.reasoning.output_tokens"] == 3
    assert plain.attributes["gen_ai.usage.cache_read.input_tokens"] == 2
    assert plain.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert streamed.attributes["gen_ai.response.id"] == "resp_strm001"
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.usage.output_tokens"] == 7


def test_responses_tool_call(openai_client, llm, memory_exporter):
    llm.queue("openai_responses_tool_call")
    openai_client.responses.create(model="gpt-4o-mini", input="Weather in Paris?")
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.tool_calls.ids"] == ("call_weather_r1",)
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)


def test_responses_items_keep_their_own_id_and_type_in_the_session(openai_client, llm, checkpoint):
    """A Responses API item has ``id`` and ``type`` of its own (``function_call``, ``fc_…``): in the
    session they stay the message's, never the entry's (whose id the model call's span names)."""
    from otel_agent_trace.offline.loader import load_session

    llm.queue("openai_responses_tool_call")
    resp = openai_client.responses.create(model="gpt-4o-mini", input="Weather in Paris?")
    paths = checkpoint.files
    checkpoint.stop()
    for path in paths:
        session = load_session(path)
        (end,) = [
            e for e in session.events if e.event_type == "span.end" and e.data["name"].startswith("chat")
        ]
        (output_id,) = end.data["content"]["output_message_ids"]
        message = session.find(output_id)  # the id the span names is the message entry's
        assert message.event_type == "message"
        view = session.conversation()[-1]
        assert view["type"] == "function_call" and view["id"] == resp.output[0].id
        assert view["call_id"] == "call_weather_r1"


async def test_async_responses_stream_abandoned(async_openai_client, memory_exporter):
    stream = await async_openai_client.responses.create(model="gpt-4o-mini", input="Hi", stream=True)
    async for _ in stream:
        break
    await stream.close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == "resp_strm001"


def test_with_raw_response_still_works(openai_client, memory_exporter):
    raw = openai_client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=USER)
    assert raw.parse().id == "chatcmpl-text001"
    assert one_model_span(memory_exporter).name == "chat gpt-4o-mini"


def test_parse_is_covered(openai_client, memory_exporter):
    from pydantic import BaseModel

    class Reply(BaseModel):
        text: str

    resp = openai_client.chat.completions.parse(
        model="gpt-4o-mini",
        messages=USER,
        response_format={"type": "json_object"},
    )
    assert resp.choices[0].message.content == "Hello! How can I help you today?"
    assert one_model_span(memory_exporter).attributes["gen_ai.response.id"] == "chatcmpl-text001"
