"""Strands Agents (OpenAI provider against the replay server): Strands' own spans are recorded,
not duplicated (no OpenAI span under its ``chat``); we add the content, tool calls, provider and
a snapshot per turn, and the session rebuilds the agent's conversation."""

from __future__ import annotations

import pytest
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
    assert names.count("chat") == 2  # Strands' own model spans, and no "chat gpt-4o-mini" of ours
    assert not [n for n in names if n.startswith("chat gpt")]
    assert {s.instrumentation_scope.name for s in spans} == {"strands.telemetry.tracer"}
    first, second = [s for s in spans if s.name == "chat"]
    assert first.attributes["gen_ai.provider.name"] == "openai"
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert first.attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
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
    assert snaps[1]["model_info"] == {"type": "strands", "model_id": "gpt-4o-mini", "provider": "openai"}
    assert snaps[-1]["model_info"]["type"] == "OpenAIModel"


def test_model_error_is_raised_and_recorded(agent, llm, memory_exporter):
    llm.queue("openai_error_400")
    with pytest.raises(Exception) as info:
        agent("What's the weather in Paris?")
    assert "temperature" in str(info.value)
    chat = next(s for s in memory_exporter.get_finished_spans() if s.name == "chat")
    assert chat.status.status_code.name == "ERROR"
    assert not [s for s in memory_exporter.get_finished_spans() if s.name.startswith("chat gpt")]
