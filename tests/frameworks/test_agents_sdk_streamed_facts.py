"""Model spans are complete whichever way the OpenAI client is called (issue 11).

The OpenAI Agents SDK's ``OpenAIResponsesModel`` calls ``client.responses.create`` for a plain
run but ``client.responses.with_streaming_response.create`` (then ``await api_response.parse()``
for the event stream) for a streamed one; LangChain's ``ChatOpenAI`` calls
``with_raw_response.create`` when it keeps the response headers. Each such model span must hold
what a bare ``create`` span holds for the same answer: provider, request and response model,
response id, finish reasons, usage, tool-call ids, and the output messages in the session file.
The reference is a bare ``create`` call replaying the same recording, not numbers written here.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import openai  # noqa: E402
from agents import Agent, OpenAIResponsesModel, Runner, function_tool  # noqa: E402

import otel_agent_trace as oat  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
INPUT = [{"role": "user", "content": "Hi there"}]
RESULT_KEYS = (
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.request.stream",
    "gen_ai.response.model",
    "gen_ai.response.id",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "agent_trace.tool_calls.ids",
    "agent_trace.tool_calls.names",
)
TURNS = ("openai_responses_handoff", "openai_responses_tool_call", "openai_responses_final")


@function_tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _facts(span: Any) -> dict[str, Any]:
    return {key: span.attributes[key] for key in RESULT_KEYS if key in span.attributes}


def _model_spans(memory_exporter: Any) -> list[Any]:
    spans = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat ")]
    return sorted(spans, key=lambda s: s.start_time)


def _outputs(files: list[Any]) -> list[tuple[int, Any, Any]]:
    """Per model span of the session file, in start order: how many output messages it holds,
    and its automatic snapshot's model info and last result."""
    path = next(p for p in files if "checkpoint" in p.name)
    session = oat.load_session(path)
    spans = sorted((s for s in session.spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
    snapshots = {e.data.get("span_id"): e.data for e in session.events if e.type == "snapshot"}
    out = []
    for span in spans:
        snapshot = snapshots.get(span.span_id) or {}
        ids = (span.content or {}).get("output_message_ids") or []
        out.append((len(ids), snapshot.get("model_info"), snapshot.get("last_result")))
    return out


def _bare(llm: Any, memory_exporter: Any, recordings: list[str], streamed: bool) -> list[dict[str, Any]]:
    """The bare-SDK ``responses.create`` spans' facts, replaying ``recordings``."""
    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    for name in recordings:
        llm.queue(name)
        if streamed:
            for _event in client.responses.create(model="gpt-4o-mini", input=INPUT, stream=True):
                pass
        else:
            client.responses.create(model="gpt-4o-mini", input=INPUT)
    facts = [_facts(s) for s in _model_spans(memory_exporter)]
    memory_exporter.clear()
    return facts


def _triage(llm: Any) -> Agent:
    client = openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    model = OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client)
    weather = Agent(
        name="weather",
        instructions="You answer weather questions.",
        handoff_description="Weather questions",
        model=model,
        tools=[get_weather],
    )
    return Agent(name="triage", instructions="Route the question.", model=model, handoffs=[weather])


@pytest.mark.parametrize("how", ["run", "run_streamed"])
def test_agents_sdk_responses_model_spans_are_as_the_bare_sdks(how, llm, memory_exporter, session_dir):
    streamed = how == "run_streamed"
    recordings = [name + ("_stream" if streamed else "") for name in TURNS]
    bare = oat.session("bare", directory=session_dir / "bare", tier="both").start()
    try:
        expected = _bare(llm, memory_exporter, recordings, streamed)
        bare_files = list(bare.files)
    finally:
        bare.stop()

    run = oat.session("agents", directory=session_dir / "run", tier="both").start()
    try:
        llm.queue(*recordings)
        triage = _triage(llm)
        if streamed:

            async def consume() -> Any:
                result = Runner.run_streamed(triage, QUESTION)
                async for _event in result.stream_events():
                    pass
                return result

            result = asyncio.run(consume())
        else:
            result = asyncio.run(Runner.run(triage, QUESTION))
        assert result.final_output == ANSWER
        got = [_facts(s) for s in _model_spans(memory_exporter)]
        run_files = list(run.files)
    finally:
        run.stop()

    assert len(expected) == 3 and expected[0]["gen_ai.response.id"].startswith("resp_hand")
    assert got == expected
    outputs = _outputs(run_files)
    assert outputs == _outputs(bare_files)
    assert all(n for n, _info, _result in outputs) and outputs[-1][2] == ANSWER


# -- the raw-response paths of the bare client -----------------------------------------------------

CALLS = {
    "chat": lambda client: client.chat.completions,
    "responses": lambda client: client.responses,
}


def _kwargs(api: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o-mini"}
    body["messages" if api == "chat" else "input"] = INPUT
    if stream:
        body["stream"] = True
    return body


def _read(parsed: Any, stream: bool) -> Any:
    if stream:
        for _item in parsed:
            pass
    return parsed


async def _aread(parsed: Any, stream: bool) -> Any:
    if stream:
        async for _item in parsed:
            pass
    return parsed


def _call(llm: Any, api: str, way: str, stream: bool) -> None:
    """One call to ``api`` the ``way`` a framework makes it, its answer read to the end."""
    kwargs = _kwargs(api, stream)
    if way.startswith("async "):
        client: Any = openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
        resource = CALLS[api](client)

        async def run() -> None:
            if way == "async create":
                await _aread(await resource.create(**kwargs), stream)
            elif way == "async with_raw_response":
                raw = await resource.with_raw_response.create(**kwargs)
                assert raw.http_response.status_code == 200
                await _aread(raw.parse(), stream)
            else:
                async with resource.with_streaming_response.create(**kwargs) as raw:
                    assert raw.http_response.status_code == 200
                    await _aread(await raw.parse(), stream)

        asyncio.run(run())
        return
    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    resource = CALLS[api](client)
    if way == "create":
        _read(resource.create(**kwargs), stream)
    elif way == "with_raw_response":
        raw = resource.with_raw_response.create(**kwargs)
        assert raw.http_response.status_code == 200
        _read(raw.parse(), stream)
    else:
        with resource.with_streaming_response.create(**kwargs) as raw:
            assert raw.http_response.status_code == 200
            _read(raw.parse(), stream)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    "way",
    [
        "with_raw_response",
        "with_streaming_response",
        "async with_raw_response",
        "async with_streaming_response",
    ],
)
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_raw_response_paths_make_the_same_span_as_create(api, way, stream, llm, memory_exporter, session_dir):
    reference = "async create" if way.startswith("async ") else "create"
    facts = []
    outputs = []
    for how in (reference, way):
        session = oat.session(how, directory=session_dir / how.replace(" ", "_"), tier="both").start()
        try:
            _call(llm, api, how, stream)
            (span,) = _model_spans(memory_exporter)
            facts.append(_facts(span))
            files = list(session.files)
        finally:
            session.stop()
        memory_exporter.clear()
        outputs.append(_outputs(files))
    assert facts[0]["gen_ai.response.id"] and facts[0]["gen_ai.usage.output_tokens"]
    assert facts[1] == facts[0]
    assert outputs[0][0][0] >= 1 and outputs[1] == outputs[0]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_raw_stream_closed_early_ends_its_span_abandoned(api, llm, memory_exporter):
    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    with CALLS[api](client).with_streaming_response.create(**_kwargs(api, True)) as raw:
        for _item in raw.parse():
            break  # the caller stops at the first item; leaving the block closes the response
    (span,) = _model_spans(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == ("chatcmpl-strm001" if api == "chat" else "resp_strm001")


def test_a_cancelled_streamed_agents_run_ends_its_model_span(llm, memory_exporter):
    llm.queue(*(name + "_stream" for name in TURNS))

    async def cancelled() -> None:
        run = Runner.run_streamed(_triage(llm), QUESTION)
        async for event in run.stream_events():
            if event.type == "raw_response_event":
                break  # the caller stops reading inside the first model stream
        run.cancel()
        await asyncio.sleep(0.05)

    asyncio.run(cancelled())
    gc.collect()
    (span,) = _model_spans(memory_exporter)  # ended, though its stream was never read to the end
    assert span.attributes["gen_ai.response.id"] == "resp_hand002"


@pytest.mark.parametrize("way", ["with_streaming_response", "with_raw_response"])
def test_a_raw_response_left_unparsed_still_ends_its_span(way, llm, memory_exporter):
    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    if way == "with_streaming_response":
        with client.responses.with_streaming_response.create(**_kwargs("responses", False)) as raw:
            assert raw.http_response.status_code == 200  # the caller reads the headers only
    else:
        raw = client.responses.with_raw_response.create(**_kwargs("responses", False))
        assert raw.http_response.status_code == 200
        del raw
        gc.collect()
    (span,) = _model_spans(memory_exporter)
    assert "gen_ai.response.id" not in span.attributes  # the body was not read: nothing to say


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "stream"])
def test_langchain_with_response_headers_makes_the_same_span(streaming, llm, memory_exporter):
    """``include_response_headers=True`` makes ``ChatOpenAI`` call ``with_raw_response``."""
    from langchain_openai import ChatOpenAI

    facts = []
    for headers in (False, True):
        chat = ChatOpenAI(
            model="gpt-4o-mini",
            base_url=llm.openai_url,
            api_key="sk-test",
            max_retries=0,
            streaming=streaming,
            include_response_headers=headers,
        )
        reply = chat.invoke("Hi there")
        assert reply.content == "Hello! How can I help you today?"
        assert ("headers" in reply.response_metadata) is headers
        (span,) = _model_spans(memory_exporter)
        facts.append(_facts(span))
        memory_exporter.clear()
    assert facts[0]["gen_ai.response.id"] and facts[1] == facts[0]
