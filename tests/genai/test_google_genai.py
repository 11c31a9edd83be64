"""Google Gen AI (the real ``google-genai`` client against the local server speaking Gemini's REST
JSON and SSE): ``generate_content`` and ``generate_content_stream``, sync and ``client.aio``, with
tools, make one ``generate_content {model}`` span each with the GenAI attributes, hand the caller
exactly what the SDK returns, and put the call's messages and a snapshot in the session; the run
replays with the server stopped.

google-genai cannot share the main test environment (it pins ``tenacity < 9.2``): these run in a
virtualenv of their own, ``python -m tests.services.genai run`` (a step of ``.ci/run``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

genai = pytest.importorskip(
    "google.genai", reason="runs in its own virtualenv: python -m tests.services.genai run"
)

from google.genai import errors, types  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.instrumentation.google_genai import GoogleGenAIInstrumentor  # noqa: E402
from otel_agent_trace.offline.loader import load_session  # noqa: E402
from tests.genai.genai_helpers import model_spans, one_model_span, strip_digests, uninstrumented  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

MODEL = "gemini-2.0-flash"
# the REST version google-genai calls by default: v1beta before 3.0, v1 since
API_VERSION = "v1" if int(genai.__version__.split(".")[0]) >= 3 else "v1beta"
PROMPT = "What's the weather in Paris?"
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="The weather in a city.",
            parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        )
    ]
)
CONFIG = types.GenerateContentConfig(
    system_instruction="You answer weather questions.",
    tools=[WEATHER],
    temperature=0.4,
    max_output_tokens=256,
)


@pytest.fixture(scope="module", autouse=True)
def google_genai_instrumented(provider):
    inst = GoogleGenAIInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


def _client(base_url: str) -> genai.Client:
    return genai.Client(api_key="gemini-test-key", http_options=types.HttpOptions(base_url=base_url))


@pytest.fixture
def client(llm):
    return _client(llm.base_url)


def test_generate_content_span_and_session(client, llm, checkpoint, memory_exporter):
    llm.queue("gemini_generate_tool_call")
    response = client.models.generate_content(model=MODEL, contents=PROMPT, config=CONFIG)
    assert response.function_calls[0].name == "get_weather"
    assert llm.requests[0]["path"] == f"/{API_VERSION}/models/{MODEL}:generateContent"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"generate_content {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "gcp.gemini" and a["gen_ai.operation.name"] == "generate_content"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.temperature"] == 0.4 and a["gen_ai.request.max_tokens"] == 256
    assert a["gen_ai.response.id"] == "resp-gemini-tool01" and a["gen_ai.response.model"] == MODEL
    assert a["gen_ai.response.finish_reasons"] == ("STOP",)
    assert a["gen_ai.usage.input_tokens"] == 60 and a["gen_ai.usage.output_tokens"] == 8
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "gen_ai.input.messages" not in a

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[0] == {"role": "user", "content": [{"text": PROMPT}]}
    assert conversation[1]["role"] == "model"
    assert conversation[1]["content"][1]["function_call"] == {
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["last_query"] == PROMPT and snap["last_result"] == "Let me check the weather."
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "gcp.gemini", "model_id": MODEL, "provider": "gcp.gemini"}


def test_stream_is_passed_through_and_assembled(client, llm, provider, checkpoint, memory_exporter):
    llm.queue("gemini_generate_tool_call_stream")
    chunks = list(client.models.generate_content_stream(model=MODEL, contents=PROMPT, config=CONFIG))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue("gemini_generate_tool_call_stream")
    plain = uninstrumented(
        GoogleGenAIInstrumentor,
        provider,
        lambda: list(client.models.generate_content_stream(model=MODEL, contents=PROMPT, config=CONFIG)),
    )
    dump = [c.model_dump(exclude={"sdk_http_response"}) for c in chunks]
    assert dump == [c.model_dump(exclude={"sdk_http_response"}) for c in plain] and len(chunks) == 3
    assert llm.requests[0]["body"] == llm.requests[1]["body"]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "resp-gemini-stream01"
    assert a["gen_ai.response.finish_reasons"] == ("STOP",) and a["gen_ai.usage.output_tokens"] == 8
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    last = strip_digests(load_session(path).conversation())[-1]
    assert last["content"] == [
        {"text": "Let me check the weather."},
        {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
    ]


def test_a_stream_left_early_ends_its_span(client, llm, memory_exporter):
    llm.queue("gemini_generate_final_stream")
    stream = client.models.generate_content_stream(model=MODEL, contents=PROMPT)
    assert next(stream).text == "It is 18°C "
    stream.close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


async def test_async_generate_and_stream(client, llm, memory_exporter):
    llm.queue("gemini_generate_final", "gemini_generate_final_stream")
    response = await client.aio.models.generate_content(model=MODEL, contents=PROMPT)
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents=PROMPT)
    text = "".join([c.text async for c in stream])
    assert response.text == text == "It is 18°C and sunny in Paris."
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.response.id"] == "resp-gemini-final01"
    assert plain.attributes["gen_ai.usage.cache_read.input_tokens"] == 20
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ("STOP",)


def test_errors_are_raised_unchanged(client, llm, memory_exporter):
    llm.queue("gemini_error_429")
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents=PROMPT)
    assert caught.value.code == 429
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ClientError"


def test_requests_are_the_same_with_and_without_us(client, llm, provider):
    llm.queue("gemini_generate_tool_call", "gemini_generate_tool_call")
    ours = client.models.generate_content(model=MODEL, contents=PROMPT, config=CONFIG)
    plain = uninstrumented(
        GoogleGenAIInstrumentor,
        provider,
        lambda: client.models.generate_content(model=MODEL, contents=PROMPT, config=CONFIG),
    )
    assert ours.model_dump(exclude={"sdk_http_response"}) == plain.model_dump(exclude={"sdk_http_response"})
    first, second = llm.requests
    assert first["body"] == second["body"]
    assert {k: v for k, v in first["headers"].items() if k.lower() != "traceparent"} == {
        k: v for k, v in second["headers"].items() if k.lower() != "traceparent"
    }


def test_no_message_text_in_the_shareable_tier(client, llm, checkpoint):
    planted = "planted-phrase-g3mini"
    llm.queue("gemini_generate_final_stream")
    config = types.GenerateContentConfig(system_instruction=planted)
    for _ in client.models.generate_content_stream(model=MODEL, contents=PROMPT, config=config):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()


def _agent_run(base_url: str) -> list[object]:
    """A tool-calling loop on the client: one agent span, two model calls (plain, then streamed)."""
    client = _client(base_url)
    with oat.agent("gemini-weather"):
        contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]
        first = client.models.generate_content(model=MODEL, contents=contents, config=CONFIG)
        contents.append(first.candidates[0].content)
        for call in first.function_calls or ():
            contents.append(
                types.Content(
                    role="user",
                    parts=[
                        types.Part.from_function_response(name=call.name, response={"result": "18°C, sunny"})
                    ],
                )
            )
        text = "".join(
            c.text or ""
            for c in client.models.generate_content_stream(model=MODEL, contents=contents, config=CONFIG)
        )
    return [first.function_calls[0].args, text]


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("gemini_generate_tool_call", "gemini_generate_final_stream"), _agent_run
    )
    assert replayed == recorded and recorded[1] == "It is 18°C and sunny in Paris."
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    # the stream's request is sent when it is first read: still under its model span
    assert exchange_holders(path) == [f"generate_content {MODEL}"] * 2
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = [s.name for s in recorded_run]
    assert names.count(f"generate_content {MODEL}") == 2 and "invoke_agent gemini-weather" in names


def test_declared_versions_cover_the_installed_one():
    from opentelemetry.instrumentation.dependencies import get_dependency_conflicts

    assert get_dependency_conflicts(GoogleGenAIInstrumentor().instrumentation_dependencies()) is None


def test_async_calls_replay_with_the_server_stopped(tmp_path):
    """``client.aio`` sends through httpx2, or through aiohttp when aiohttp is installed: either
    transport is kept and answered."""
    import asyncio

    async def calls(base_url: str) -> list[object]:
        client = _client(base_url)
        first = await client.aio.models.generate_content(model=MODEL, contents=PROMPT, config=CONFIG)
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents=PROMPT, config=CONFIG)
        return [first.function_calls[0].name, "".join([c.text or "" async for c in stream])]

    def run(base_url: str) -> list[object]:
        with oat.agent("gemini-async"):
            return asyncio.run(calls(base_url))

    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("gemini_generate_tool_call", "gemini_generate_final_stream"), run
    )
    assert replayed == recorded == ["get_weather", "It is 18°C and sunny in Paris."]
    assert report["answered"] == 2 and report["divergences"] == []
    assert exchange_holders(path) == [f"generate_content {MODEL}"] * 2


CALLED: list[str] = []  # the cities get_weather was called for


def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLED.append(city)
    return f"Sunny, 18°C in {city} (planted-afc-result)"


def _coroutine_tool() -> Any:
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny, 18°C in {city} (planted-afc-result)"

    get_weather.__annotations__ = {"city": str, "return": str}
    return get_weather


# google-genai before 2.34 takes the annotations for types (this module's are strings)
get_weather.__annotations__ = {"city": str, "return": str}


@pytest.mark.parametrize("how", ["sync", "async", "async-coroutine"])
def test_automatic_function_calls_are_tool_spans_under_the_model_call(
    how, client, llm, checkpoint, memory_exporter
):
    """``tools=[python_function]``: the SDK calls the function itself and asks the model again,
    all inside one ``generate_content``: one ``execute_tool`` span per call under its span, with
    the model's call id, arguments and result; the rounds in the session's conversation."""
    import asyncio

    llm.queue("gemini_generate_tool_call_id", "gemini_generate_final")
    tool = _coroutine_tool() if how == "async-coroutine" else get_weather
    config = types.GenerateContentConfig(system_instruction="You answer weather questions.", tools=[tool])
    if how == "sync":
        response = client.models.generate_content(model=MODEL, contents=PROMPT, config=config)
    else:
        response = asyncio.run(
            client.aio.models.generate_content(model=MODEL, contents=PROMPT, config=config)
        )
    assert response.text == "It is 18°C and sunny in Paris."
    sent = llm.requests[1]["body"]["contents"]
    assert sent[2]["parts"][0]["functionResponse"]["response"] == {
        "result": "Sunny, 18°C in Paris (planted-afc-result)"
    }
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()

    model = one_model_span(memory_exporter)
    (tool_span,) = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert tool_span.name == f"execute_tool {tool.__name__}" and tool_span.parent is not None
    assert tool_span.parent.span_id == model.context.span_id
    a = tool_span.attributes
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == tool.__name__
    assert a["gen_ai.tool.call.id"] == "call_weather_1" and a["gen_ai.tool.type"] == "function"
    assert a["gen_ai.tool.description"] == "The weather in a city."
    assert model.attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert model.attributes["agent_trace.tool_calls.names"] == ("get_weather",)

    session = load_session(checkpoint_file)
    tool_entry = next(s for s in session.spans if s.name.startswith("execute_tool"))
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == "Sunny, 18°C in Paris (planted-afc-result)"
    conversation = strip_digests(session.conversation())
    assert [m["role"] for m in conversation] == ["user", "model", "user", "model"]
    assert conversation[1]["content"][1]["function_call"] == {
        "id": "call_weather_1",
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    assert conversation[2]["content"][0]["function_response"]["response"] == {
        "result": "Sunny, 18°C in Paris (planted-afc-result)"
    }
    assert conversation[3]["content"] == [{"text": "It is 18°C and sunny in Paris."}]
    (snap,) = session.snapshots
    assert snap["last_query"] == PROMPT and snap["tools_loaded"] == [tool.__name__]
    assert snap["agent_messages_count"] == 4 and snap["last_result"].endswith(
        "It is 18°C and sunny in Paris."
    )
    # the shareable tier: the tool's result as its (redacted) preview on the tool span, the
    # messages that carry it hashed
    holders = [json.loads(line) for line in trace_file.read_text().splitlines() if "planted-afc" in line]
    assert [(e["type"], e["name"]) for e in holders] == [("span.end", "execute_tool get_weather")]
    assert "planted-afc-result" in checkpoint_file.read_text()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_streamed_automatic_function_calls_and_their_replay(is_async, tmp_path, memory_exporter):
    """``generate_content_stream`` with a Python function: the SDK calls it while the stream is
    read and streams the next round. The tool span and the second round's request are under the
    model span; the session holds every round; the run replays with the server stopped."""
    import asyncio

    config = types.GenerateContentConfig(tools=[get_weather])

    async def read_async(client: genai.Client) -> list[object]:
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents=PROMPT, config=config)
        return [c.text async for c in stream]

    def run(base_url: str) -> list[object]:
        client = _client(base_url)
        CALLED.clear()
        with oat.agent("gemini-afc"):
            if is_async:
                return [*asyncio.run(read_async(client)), list(CALLED)]
            stream = client.models.generate_content_stream(model=MODEL, contents=PROMPT, config=config)
            return [*(c.text for c in stream), list(CALLED)]

    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("gemini_generate_tool_call_stream", "gemini_generate_final_stream"), run
    )
    chunks = ["Let me check ", "the weather.", None, "It is 18°C ", "and sunny in Paris."]
    assert recorded == [*chunks, ["Paris"]]
    assert replayed == [*chunks, []]  # its result answered from the recording: not called
    assert report["answered"] == 2 and report["divergences"] == [] and report["refused"] == []
    assert exchange_holders(path) == [f"generate_content {MODEL}"]  # both rounds' requests

    spans = memory_exporter.get_finished_spans()
    first_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    (model,) = [s for s in first_run if s.name == f"generate_content {MODEL}"]
    (tool,) = [s for s in first_run if s.name == "execute_tool get_weather"]
    assert tool.parent is not None and tool.parent.span_id == model.context.span_id
    assert tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert model.attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    assert model.attributes["gen_ai.response.id"] == "resp-gemini-stream02"

    conversation = strip_digests(load_session(path).conversation())
    assert conversation[0] == {"role": "user", "content": [{"text": PROMPT}]}
    assert [m["role"] for m in conversation[1:]] == ["model", "model", "model", "user", "model"]
    assert conversation[3]["content"] == [
        {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}
    ]
    assert conversation[4]["content"][0]["function_response"]["response"] == {
        "result": "Sunny, 18°C in Paris (planted-afc-result)"
    }
    assert conversation[-1]["content"] == [{"text": "It is 18°C and sunny in Paris."}]
