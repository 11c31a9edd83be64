"""Strands Agents (OpenAI provider against the replay server): Strands' own spans are recorded,
not duplicated (no OpenAI span under its ``chat``); we add the content, tool calls, provider and
a snapshot per turn, and the session rebuilds the agent's conversation."""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import strip_digests


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


@pytest.fixture
def agent(llm):
    model = OpenAIModel(
        client_args={"base_url": llm.openai_url, "api_key": "sk-test", "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    return Agent(
        model=model,
        tools=[get_weather],
        system_prompt="You answer weather questions.",
        name="weather",
        callback_handler=None,
    )


def test_tool_calling_run_is_recorded_without_duplicates(agent, llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    result = agent("What's the weather in Paris?")
    assert str(result).strip() == "It is 18°C and sunny in Paris."
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    spans = memory_exporter.get_finished_spans()
    names = [s.name for s in spans]
    assert names.count("invoke_agent weather") == 1
    # Strands' own model spans, named and of the kind of an SDK's model span; none of ours
    assert names.count("chat gpt-4o-mini") == 2
    assert {s.instrumentation_scope.name for s in spans} == {"strands.telemetry.tracer"}
    first, second = [s for s in spans if s.name == "chat gpt-4o-mini"]
    assert first.kind is SpanKind.CLIENT and second.kind is SpanKind.CLIENT
    assert first.attributes["gen_ai.provider.name"] == "openai"
    assert first.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    # the provider's own words, as the bare SDK's span has them (Strands says tool_use / end_turn)
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first.attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tool_span = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_weather_1"  # links to the request

    session = load_session(path)
    assert strip_digests(session.conversation()) == jsonable(agent.messages)
    snaps = session.snapshots
    # one per model turn, then one for the agent turn (DevDuck's snapshot after each query)
    assert [s["agent_messages_count"] for s in snaps] == [2, 4, 4]
    assert [s["description"] for s in snaps] == ["after chat gpt-4o-mini"] * 2 + [
        "after invoke_agent weather"
    ]
    assert snaps[-1]["system_prompt"] == "You answer weather questions."
    assert snaps[-1]["last_query"] == "What's the weather in Paris?"
    assert snaps[-1]["last_result"] == "It is 18°C and sunny in Paris."
    # one model_info shape for every snapshot of the run
    info = {"type": "OpenAIModel", "model_id": "gpt-4o-mini", "provider": "openai"}
    assert [s["model_info"] for s in snaps] == [info] * 3
    # the tools the model was offered, in each snapshot
    assert [s["tools_loaded"] for s in snaps] == [["get_weather"]] * 3


def test_model_error_is_raised_and_recorded(agent, llm, memory_exporter):
    llm.queue("openai_error_400")
    with pytest.raises(Exception) as info:
        agent("What's the weather in Paris?")
    assert "temperature" in str(info.value)
    (chat,) = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat")]
    assert chat.name == "chat gpt-4o-mini" and chat.instrumentation_scope.name == "strands.telemetry.tracer"
    assert chat.status.status_code.name == "ERROR"


def test_provider_from_the_model_class_without_an_instrumented_sdk(agent, llm, provider, memory_exporter):
    """Strands' model providers whose SDK we do not instrument (Ollama, Bedrock, ...) still get
    ``gen_ai.provider.name``: from the Strands model class (shown here with the OpenAI one)."""
    from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().uninstrument()
    try:
        llm.queue("openai_chat_final_stream")
        agent("What's the weather in Paris?")
    finally:
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    (chat,) = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat")]
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)


def test_model_span_has_the_response_id_and_model(agent, llm, memory_exporter):
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    agent("What's the weather in Paris?")
    first, second = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat")]
    assert first.attributes["gen_ai.response.id"] == "chatcmpl-tool002"
    assert second.attributes["gen_ai.response.id"] == "chatcmpl-final02"
    assert first.attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    # Strands' OpenAI provider always streams: said, and timed, as a bare streamed call's span
    assert first.attributes["gen_ai.request.stream"] is True and second.attributes["gen_ai.request.stream"]
    assert first.attributes["gen_ai.response.time_to_first_chunk"] > 0
    assert second.attributes["gen_ai.response.time_to_first_chunk"] > 0


def test_ollama_model_span_is_complete(llm, memory_exporter):
    """Strands' Ollama provider (the ``ollama`` client, which we do not instrument): provider from
    the model class, Ollama's own done_reason and model from its last response; Strands invents
    the tool-call ids (Ollama has none)."""
    import ollama  # noqa: F401  (in the test extra: never skipped)
    from strands.models.ollama import OllamaModel

    agent = Agent(
        model=OllamaModel(host=llm.base_url, model_id="qwen3:1.7b"),
        tools=[get_weather],
        name="weather",
        callback_handler=None,
    )
    llm.queue("ollama_chat_tool_call_stream", "ollama_chat_final_stream")
    assert str(agent("What's the weather in Paris?")).strip() == "It is 18°C and sunny in Paris."
    first, second = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat")]
    assert first.name == "chat qwen3:1.7b" and first.kind is SpanKind.CLIENT
    for span in (first, second):
        assert span.attributes["gen_ai.provider.name"] == "ollama"
        assert span.attributes["gen_ai.response.model"] == "qwen3:1.7b"
        assert span.attributes["gen_ai.response.finish_reasons"] == ("stop",)  # Ollama's word
    (call_id,) = first.attributes["agent_trace.tool_calls.ids"]
    tool_span = next(s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather")
    assert tool_span.attributes["gen_ai.tool.call.id"] == call_id
