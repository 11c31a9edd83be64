"""One model call, one span: the HTTP request under a model call of ours is recorded as
attributes of the model span (server address and port, status, duration, resends), never as a
second span, for the OpenAI and Anthropic clients, sync, async and streamed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from otel_agent_trace.instrumentation.system.http import HTTPInstrumentor

USER = [{"role": "user", "content": "Hi there"}]


@pytest.fixture(scope="module")
def http_layer(provider: Any) -> Iterator[None]:
    inst = HTTPInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


def _openai(client: Any) -> None:
    client.chat.completions.create(model="gpt-4o-mini", messages=USER)


def _openai_stream(client: Any) -> None:
    for _ in client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True):
        pass


async def _openai_async(client: Any) -> None:
    await client.chat.completions.create(model="gpt-4o-mini", messages=USER)


async def _openai_async_stream(client: Any) -> None:
    async for _ in await client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True):
        pass


def _anthropic(client: Any) -> None:
    client.messages.create(model="claude-test", max_tokens=10, messages=USER)


def _anthropic_stream(client: Any) -> None:
    for _ in client.messages.create(model="claude-test", max_tokens=10, messages=USER, stream=True):
        pass


async def _anthropic_async(client: Any) -> None:
    await client.messages.create(model="claude-test", max_tokens=10, messages=USER)


async def _anthropic_async_stream(client: Any) -> None:
    stream = await client.messages.create(model="claude-test", max_tokens=10, messages=USER, stream=True)
    async for _ in stream:
        pass


CASES = {
    "openai": ("openai_client", _openai),
    "openai-stream": ("openai_client", _openai_stream),
    "openai-async": ("async_openai_client", _openai_async),
    "openai-async-stream": ("async_openai_client", _openai_async_stream),
    "anthropic": ("anthropic_client", _anthropic),
    "anthropic-stream": ("anthropic_client", _anthropic_stream),
    "anthropic-async": ("async_anthropic_client", _anthropic_async),
    "anthropic-async-stream": ("async_anthropic_client", _anthropic_async_stream),
}


def _trace_entries(session: Any) -> list[dict[str, Any]]:
    with open(session.files[0], "rb") as f:
        return [orjson.loads(line) for line in f]


@pytest.mark.parametrize("case", list(CASES))
def test_one_span_per_model_call_with_the_http_facts_on_it(
    case, request, http_layer, recording, llm, memory_exporter
):
    fixture, call = CASES[case]
    client = request.getfixturevalue(fixture)
    done = call(client)
    if asyncio.iscoroutine(done):
        asyncio.run(done)
    spans = memory_exporter.get_finished_spans()
    assert [s.name for s in spans] == [f"chat {'gpt-4o-mini' if 'openai' in case else 'claude-test'}"]
    a = spans[0].attributes
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == llm.port
    assert a["http.response.status_code"] == 200
    assert isinstance(a["agent_trace.http.duration"], float) and a["agent_trace.http.duration"] > 0
    assert "http.request.resend_count" not in a
    recording.flush()
    span_ids = {e["span_id"] for e in _trace_entries(recording) if e["type"] in ("span.start", "span.end")}
    assert span_ids == {f"{spans[0].context.span_id:016x}"}  # no POST span in the session file either


def test_a_retried_request_counts_its_resends(http_layer, recording, llm, memory_exporter):
    import openai

    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=1)
    llm.queue("openai_error_500", "openai_chat_text")
    client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    (span,) = memory_exporter.get_finished_spans()
    assert span.attributes["http.request.resend_count"] == 1
    assert span.attributes["http.response.status_code"] == 200  # the last attempt's


def test_a_request_outside_a_model_call_keeps_its_own_span(http_layer, recording, llm, memory_exporter):
    import httpx2

    with httpx2.Client() as client:
        client.post(llm.openai_url + "/chat/completions", json={"model": "m", "messages": USER})
    (span,) = memory_exporter.get_finished_spans()
    assert span.name == "POST" and span.attributes["http.response.status_code"] == 200


@pytest.mark.parametrize("case", ["openai", "openai-async-stream", "anthropic", "anthropic-stream"])
def test_the_http_facts_are_on_the_model_span_without_a_session(
    case, request, http_layer, llm, memory_exporter
):
    """Forwarding only (``AGENT_TRACE_RECORD=false``: no session records), the model span still
    names its server, as contrib's does: the facts are the span's own, not the session's."""
    from otel_agent_trace._internal import sink

    assert sink.active() is None
    fixture, call = CASES[case]
    done = call(request.getfixturevalue(fixture))
    if asyncio.iscoroutine(done):
        asyncio.run(done)
    (span,) = memory_exporter.get_finished_spans()
    a = span.attributes
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == llm.port
    assert a["http.response.status_code"] == 200
    assert "http.request.resend_count" not in a


def test_without_a_session_a_request_outside_a_model_call_is_not_recorded(http_layer, llm, memory_exporter):
    import httpx2

    with httpx2.Client() as client:
        client.post(llm.openai_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert memory_exporter.get_finished_spans() == ()


def test_the_agents_messages_reach_the_recorder_unchanged_and_uncopied_when_plain(
    http_layer, checkpoint, capture, openai_client, memory_exporter
):
    import copy

    capture("SPAN_AND_EVENT")  # content on the span too: every path that reads the messages
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]
    before = copy.deepcopy(messages)
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assert messages == before  # never modified by us
    assert len(memory_exporter.get_finished_spans()) == 2
    from openai import omit

    from otel_agent_trace.instrumentation._genai.jsonable import jsonable

    assert jsonable(messages[1]) is messages[1]  # plain JSON: the same object, not a copy per call
    odd = {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": omit}
    assert jsonable(odd) == {"role": "user", "content": [{"type": "text", "text": "hi"}]}  # a copy


def test_a_strands_model_span_takes_the_http_facts_too(http_layer, recording, llm, memory_exporter):
    """Strands' own ``chat`` span (claimed by our Strands instrumentation) gets the facts of the
    request its OpenAI provider sends: no ``POST`` span under it."""
    from strands import Agent
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"base_url": llm.openai_url, "api_key": "sk-test", "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    llm.queue("openai_chat_final_stream")  # Strands' provider always streams
    Agent(model=model, name="plain", callback_handler=None)("Hi there")
    spans = memory_exporter.get_finished_spans()
    assert not [s.name for s in spans if s.name in ("POST", "HTTP")]
    (chat,) = [s for s in spans if s.name == "chat gpt-4o-mini"]
    a = chat.attributes
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == llm.port
    assert a["http.response.status_code"] == 200 and a["agent_trace.http.duration"] > 0


def test_a_value_the_sdk_warns_about_is_read_without_warning_again():
    """A structured-output model holding a value its type does not expect (MagenticOne's ledger,
    say): the SDK warns its user once; reading it for the session adds no second warning."""
    import warnings

    from pydantic import BaseModel

    from otel_agent_trace.instrumentation._genai.jsonable import jsonable

    class Ledger(BaseModel):
        count: int

    odd = Ledger.model_construct(count="three")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert jsonable({"ledger": odd}) == {"ledger": {"count": "three"}}
    assert [str(w.message) for w in caught] == []
