"""Ollama (the real ``ollama`` client against the local server speaking Ollama's JSON and NDJSON
streams): ``chat`` plain, streamed and with tools, sync and async, makes one ``chat {model}`` span
each with the GenAI attributes, hands the caller exactly what the client returns, and puts the
call's messages and a snapshot in the session; the run replays with the server stopped."""

from __future__ import annotations

import ollama
import pytest
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent_trace as oat
from otel_agent_trace.instrumentation.ollama import OllamaInstrumentor
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import entries, model_spans, one_model_span, strip_digests, uninstrumented
from tests.genai.replay_helpers import exchange_holders, record_then_replay

MODEL = "qwen3:1.7b"
SYSTEM = {"role": "system", "content": "You answer weather questions."}
USER = {"role": "user", "content": "What's the weather in Paris?"}


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
      city: the city
    """
    return "18°C, sunny"


TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture(scope="module", autouse=True)
def ollama_instrumented(provider):
    inst = OllamaInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


@pytest.fixture
def client(llm):
    return ollama.Client(host=llm.base_url)


def test_chat_span_and_session(client, llm, checkpoint, memory_exporter):
    llm.queue("ollama_chat_tool_call")
    response = client.chat(
        MODEL, [SYSTEM, USER], tools=[TOOL], options={"temperature": 0.2, "num_predict": 300, "top_k": 20}
    )
    assert response.message.tool_calls[0].function.name == "get_weather"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "ollama" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.temperature"] == 0.2 and a["gen_ai.request.max_tokens"] == 300
    assert a["gen_ai.request.top_k"] == 20
    assert a["gen_ai.response.model"] == MODEL and a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == 80 and a["gen_ai.usage.output_tokens"] == 15
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert a["agent_trace.tool_calls.ids"] == ("",)  # Ollama gives tool calls no id
    assert "gen_ai.input.messages" not in a  # content stays off the span by default

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[:2] == [SYSTEM, USER]
    assert conversation[2]["tool_calls"] == [
        {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    ]
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["last_query"] == "What's the weather in Paris?"
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "ollama", "model_id": MODEL, "provider": "ollama"}


def test_a_python_function_as_tool_is_described_as_ollama_sends_it(client, llm, checkpoint):
    llm.queue("ollama_chat_tool_call")
    client.chat(model=MODEL, messages=[USER], tools=[get_weather])
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    sent = llm.requests[0]["body"]["tools"]
    end = next(e for e in entries(path) if e["type"] == "span.end" and e["name"] == f"chat {MODEL}")
    assert end["content"]["tool_definitions"] == sent


def test_stream_is_passed_through_and_assembled(client, llm, provider, checkpoint, memory_exporter):
    llm.queue("ollama_chat_tool_call_stream")
    parts = list(client.chat(MODEL, [USER], tools=[TOOL], stream=True))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue("ollama_chat_tool_call_stream")
    plain = uninstrumented(
        OllamaInstrumentor, provider, lambda: list(client.chat(MODEL, [USER], tools=[TOOL], stream=True))
    )
    assert parts == plain and len(parts) == 2  # the same responses, in the same order
    assert llm.requests[0]["body"] == llm.requests[1]["body"]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.finish_reasons"] == ("stop",) and a["gen_ai.usage.output_tokens"] == 15
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    last = strip_digests(load_session(path).conversation())[-1]
    assert last["tool_calls"][0]["function"]["name"] == "get_weather"


def test_module_level_chat_and_a_stream_left_early(llm, memory_exporter, monkeypatch):
    # ``ollama.chat`` is bound to a default client made when ``ollama`` was imported: point its
    # httpx client at the server
    monkeypatch.setattr(ollama._client._client, "base_url", llm.base_url)
    llm.queue("ollama_chat_final_stream")
    stream = ollama.chat(MODEL, [USER], stream=True)
    first = next(stream)
    assert first.message.content == "It is 18°C"
    stream.close()  # left after the first part: the span ends with what was read
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


async def test_async_chat_and_stream(llm, memory_exporter):
    client = ollama.AsyncClient(host=llm.base_url)
    llm.queue("ollama_chat_final", "ollama_chat_final_stream")
    response = await client.chat(MODEL, [USER])
    text = "".join([p.message.content async for p in await client.chat(MODEL, [USER], stream=True)])
    assert response.message.content == text == "It is 18°C and sunny in Paris."
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.usage.input_tokens"] == 110
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ("stop",)


def test_errors_are_raised_unchanged(client, llm, memory_exporter):
    llm.queue("ollama_error_404")
    with pytest.raises(ollama.ResponseError) as caught:
        client.chat("nope:1b", [USER])
    assert caught.value.status_code == 404
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ResponseError"


def test_requests_are_the_same_with_and_without_us(client, llm, provider):
    llm.queue("ollama_chat_tool_call", "ollama_chat_tool_call")
    ours = client.chat(MODEL, [SYSTEM, USER], tools=[TOOL, get_weather], options={"temperature": 0})
    plain = uninstrumented(
        OllamaInstrumentor,
        provider,
        lambda: client.chat(MODEL, [SYSTEM, USER], tools=[TOOL, get_weather], options={"temperature": 0}),
    )
    assert ours == plain
    first, second = llm.requests
    assert first["body"] == second["body"]
    assert {k: v for k, v in first["headers"].items() if k.lower() != "traceparent"} == {
        k: v for k, v in second["headers"].items() if k.lower() != "traceparent"
    }


def test_no_message_text_in_the_shareable_tier(client, llm, checkpoint):
    planted = "planted-phrase-0llama"
    llm.queue("ollama_chat_final_stream")
    for _ in client.chat(MODEL, [{"role": "system", "content": planted}, USER], stream=True):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()


def _agent_run(base_url: str) -> list[object]:
    """A tool-calling loop on the client: one agent span, two model calls (plain, then streamed)."""
    client = ollama.Client(host=base_url)
    with oat.agent("ollama-weather"):
        messages: list[object] = [SYSTEM, USER]
        first = client.chat(MODEL, messages, tools=[TOOL])
        messages.append(first.message)
        for call in first.message.tool_calls or ():
            messages.append(
                {
                    "role": "tool",
                    "content": get_weather(**call.function.arguments),
                    "tool_name": "get_weather",
                }
            )
        text = "".join(p.message.content for p in client.chat(MODEL, messages, tools=[TOOL], stream=True))
    return [first.message.model_dump(), text]


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("ollama_chat_tool_call", "ollama_chat_final_stream"), _agent_run
    )
    # a streamed chat sends its request when first read: still under its model span
    assert exchange_holders(path) == [f"chat {MODEL}", f"chat {MODEL}"]
    assert replayed == recorded and recorded[1] == "It is 18°C and sunny in Paris."
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = [s.name for s in recorded_run]
    assert names.count(f"chat {MODEL}") == 2 and "invoke_agent ollama-weather" in names


def test_under_strands_one_span_per_model_call(llm, memory_exporter):
    """Strands' ``OllamaModel`` calls ``AsyncClient.chat(stream=True)`` inside its own model span:
    that span describes the call (Ollama's model and finish reason), no second span is made."""
    from strands import Agent, tool
    from strands.models.ollama import OllamaModel

    agent = Agent(
        model=OllamaModel(host=llm.base_url, model_id=MODEL),
        tools=[tool(get_weather)],
        name="weather",
        callback_handler=None,
    )
    llm.queue("ollama_chat_tool_call_stream", "ollama_chat_final_stream")
    assert str(agent("What's the weather in Paris?")).strip() == "It is 18°C and sunny in Paris."
    first, second = model_spans(memory_exporter)
    for span in (first, second):
        assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
        assert span.attributes["gen_ai.provider.name"] == "ollama"
        assert span.attributes["gen_ai.response.model"] == MODEL
        assert span.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert len({s.context.trace_id for s in memory_exporter.get_finished_spans()}) == 1


QUESTION = "What is the capital of France?"
COMPLETION = "Paris is the capital of France."
EMBED_MODEL = "all-minilm"


def test_generate_is_a_text_completion_span_with_its_session(client, llm, checkpoint, memory_exporter):
    llm.queue("ollama_generate_final")
    response = client.generate(MODEL, QUESTION, system="Answer briefly.", options={"temperature": 0.1})
    assert response.response == COMPLETION and llm.requests[0]["path"] == "/api/generate"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"text_completion {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.operation.name"] == "text_completion" and a["gen_ai.provider.name"] == "ollama"
    assert a["gen_ai.request.model"] == MODEL and a["gen_ai.request.temperature"] == 0.1
    assert a["gen_ai.response.model"] == MODEL and a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == 14 and a["gen_ai.usage.output_tokens"] == 8
    session = load_session(path)
    assert strip_digests(session.conversation()) == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": COMPLETION},
    ]
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "Answer briefly." and snap["last_query"] == QUESTION
    assert snap["last_result"] == COMPLETION


def test_streamed_generate_is_passed_through_unchanged(client, llm, provider, checkpoint, memory_exporter):
    llm.queue("ollama_generate_final_stream")
    parts = list(client.generate(model=MODEL, prompt=QUESTION, stream=True))
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    llm.queue("ollama_generate_final_stream")
    plain = uninstrumented(
        OllamaInstrumentor, provider, lambda: list(client.generate(model=MODEL, prompt=QUESTION, stream=True))
    )
    assert parts == plain and len(parts) == 3  # the same responses, in the same order
    assert llm.requests[0]["body"] == llm.requests[1]["body"]
    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"text_completion {MODEL}" and a["gen_ai.request.stream"] is True
    assert a["gen_ai.response.finish_reasons"] == ("stop",) and a["gen_ai.usage.output_tokens"] == 8
    assert strip_digests(load_session(checkpoint_file).conversation())[-1]["content"] == COMPLETION
    assert COMPLETION not in trace_file.read_text() and QUESTION not in trace_file.read_text()


def test_embed_is_an_embeddings_span_with_no_messages(client, llm, checkpoint, memory_exporter):
    llm.queue("ollama_embed")
    response = client.embed(EMBED_MODEL, ["Paris", "Lyon"])
    assert len(response.embeddings) == 2 and llm.requests[0]["path"] == "/api/embed"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    (span,) = memory_exporter.get_finished_spans()
    a = span.attributes
    assert span.name == f"embeddings {EMBED_MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.operation.name"] == "embeddings" and a["gen_ai.provider.name"] == "ollama"
    assert a["gen_ai.request.model"] == EMBED_MODEL and a["gen_ai.response.model"] == EMBED_MODEL
    assert a["gen_ai.usage.input_tokens"] == 9 and a["gen_ai.embeddings.dimension.count"] == 4
    session = load_session(path)
    assert session.conversation() == [] and session.snapshots == []  # not a conversation turn


async def test_async_and_module_level_generate_and_embed(llm, memory_exporter, monkeypatch):
    client = ollama.AsyncClient(host=llm.base_url)
    llm.queue("ollama_generate_final", "ollama_generate_final_stream", "ollama_embed")
    response = await client.generate(MODEL, QUESTION)
    text = "".join([p.response async for p in await client.generate(MODEL, QUESTION, stream=True)])
    vectors = await client.embed(EMBED_MODEL, "Paris")
    assert response.response == text == COMPLETION and len(vectors.embeddings) == 2
    monkeypatch.setattr(ollama._client._client, "base_url", llm.base_url)
    llm.queue("ollama_generate_final", "ollama_embed")
    assert ollama.generate(MODEL, QUESTION).response == COMPLETION
    assert len(ollama.embed(EMBED_MODEL, "Paris").embeddings) == 2
    names = [s.name for s in memory_exporter.get_finished_spans()]
    assert names == [f"text_completion {MODEL}"] * 2 + [f"embeddings {EMBED_MODEL}"] + [
        f"text_completion {MODEL}",
        f"embeddings {EMBED_MODEL}",
    ]


def test_generate_errors_are_raised_unchanged(client, llm, memory_exporter):
    llm.queue("ollama_error_404", "ollama_error_404")
    with pytest.raises(ollama.ResponseError):
        client.generate("nope:1b", QUESTION)
    with pytest.raises(ollama.ResponseError):
        client.embed("nope:1b", "Paris")
    spans = memory_exporter.get_finished_spans()
    assert [s.attributes["error.type"] for s in spans] == ["ResponseError", "ResponseError"]
    assert all(s.status.status_code is StatusCode.ERROR for s in spans)


def test_generate_and_embed_replay_with_the_server_stopped(tmp_path):
    def run(base_url: str) -> list[object]:
        client = ollama.Client(host=base_url)
        with oat.agent("ollama-generate"):
            vectors = client.embed(EMBED_MODEL, ["Paris", "Lyon"]).embeddings
            answer = client.generate(MODEL, QUESTION).response
            streamed = "".join(p.response for p in client.generate(MODEL, QUESTION, stream=True))
        return [vectors, answer, streamed]

    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("ollama_embed", "ollama_generate_final", "ollama_generate_final_stream"), run
    )
    assert replayed == recorded and recorded[2] == COMPLETION
    assert report["answered"] == 3 and report["divergences"] == [] and report["unused"] == 0
    assert exchange_holders(path) == [f"embeddings {EMBED_MODEL}"] + [f"text_completion {MODEL}"] * 2
