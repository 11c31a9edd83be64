"""Every span of a session is findable by the session's id, and a host's own ``session.id`` is
never replaced: DevDuck passes ``trace_attributes={"session.id": ...}`` to Strands (issue 11)."""

from __future__ import annotations

import orjson
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from otel_agent_trace.offline.loader import load_session


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm, **extra):
    model = OpenAIModel(
        client_args={"base_url": llm.openai_url, "api_key": "sk-test", "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    return Agent(model=model, tools=[get_weather], name="weather", callback_handler=None, **extra)


def test_a_hosts_session_id_is_kept_and_ours_is_on_every_span(llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    agent = _agent(llm, trace_attributes={"session.id": "devduck-2026-12-01"})
    agent("What's the weather in Paris?")
    ours = checkpoint.session_id
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    spans = memory_exporter.get_finished_spans()
    assert len(spans) >= 4
    assert {s.attributes["agent_trace.session.id"] for s in spans} == {ours}
    hosts = [s for s in spans if s.attributes.get("session.id") == "devduck-2026-12-01"]
    names = {s.name for s in hosts}  # Strands' own spans keep the host's value
    assert "invoke_agent weather" in names and any(n.startswith("chat") for n in names)
    assert {s.attributes["session.id"] for s in spans if s not in hosts} <= {ours}

    # The session file keeps the host's value too (what the spans said, nothing replaced).
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    agent_lines = [e for e in lines if e.get("name") == "invoke_agent weather"]
    assert agent_lines
    values = {(e.get("attributes") or {}).get("session.id") for e in agent_lines} - {None}
    assert values == {"devduck-2026-12-01"}  # (an end line may leave out what its start said)
    assert load_session(path).session_id == ours


def test_without_a_host_value_both_keys_name_the_session(llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_final_stream")
    _agent(llm)("Hello")
    ours = checkpoint.session_id
    spans = memory_exporter.get_finished_spans()
    assert spans
    for span in spans:
        assert span.attributes["agent_trace.session.id"] == ours
        assert span.attributes["session.id"] == ours
