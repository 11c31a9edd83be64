"""Message content: always in the session (full in the checkpoint tier, sizes + SHA-256 in the
trace tier), and on spans / span events only as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
says. One model call is a point the conversation can be rebuilt from."""

from __future__ import annotations

import json

import pytest

from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import entries, model_spans

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hi there"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
DETAILS = "gen_ai.client.inference.operation.details"


@pytest.mark.parametrize(
    "mode, on_span, in_event",
    [
        ("NO_CONTENT", False, False),
        ("SPAN_ONLY", True, False),
        ("EVENT_ONLY", False, True),
        ("SPAN_AND_EVENT", True, True),
    ],
)
def test_content_setting_decides_what_reaches_the_span(
    openai_client, memory_exporter, capture, mode, on_span, in_event
):
    capture(mode)
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=TOOLS)
    span = model_spans(memory_exporter)[0]
    keys = (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
    )
    assert all((k in span.attributes) is on_span for k in keys)
    events = [e for e in span.events if e.name == DETAILS]
    assert bool(events) is in_event
    if on_span or in_event:
        attrs = span.attributes if on_span else events[0].attributes
        assert json.loads(attrs["gen_ai.input.messages"]) == [
            {"role": "system", "parts": [{"type": "text", "content": "You are terse."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Hi there"}]},
        ]
        assert json.loads(attrs["gen_ai.output.messages"]) == [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": "Hello! How can I help you today?"}],
                "finish_reason": "stop",
            }
        ]
        assert json.loads(attrs["gen_ai.system_instructions"]) == [
            {"type": "text", "content": "You are terse."}
        ]
        assert json.loads(attrs["gen_ai.tool.definitions"])[0]["function"]["name"] == "get_weather"


def test_tool_call_parts_in_semconv_messages(openai_client, llm, memory_exporter, capture):
    capture("SPAN_ONLY")
    llm.queue("openai_chat_tool_call")
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    out = json.loads(model_spans(memory_exporter)[0].attributes["gen_ai.output.messages"])
    assert out[0]["parts"] == [
        {"type": "tool_call", "id": "call_weather_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    ]


def test_session_tiers_keep_full_text_or_only_hashes(openai_client, checkpoint, memory_exporter):
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=TOOLS)
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    full = [e for e in entries(checkpoint_file) if e["type"] == "message"]
    assert [(m["role"], m["content"]) for m in full] == [
        ("system", "You are terse."),
        ("user", "Hi there"),
        ("assistant", "Hello! How can I help you today?"),
    ]
    reduced = [e for e in entries(trace_file) if e["type"] == "message"]
    assert all(
        "content" not in m and m["content_chars"] > 0 and len(m["content_sha256"]) == 64 for m in reduced
    )
    assert "Hi there" not in trace_file.read_text()
    assert not any("gen_ai.input.messages" in (s.attributes or {}) for s in model_spans(memory_exporter))
    end = next(
        e for e in entries(checkpoint_file) if e["type"] == "span.end" and e["name"] == "chat gpt-4o-mini"
    )
    assert end["content"]["system_instructions"] == "You are terse."
    assert end["content"]["tool_definitions"][0]["function"]["name"] == "get_weather"
    assert len(end["content"]["input_message_ids"]) == 2 and len(end["content"]["output_message_ids"]) == 1


def test_each_model_call_records_a_snapshot(openai_client, checkpoint):
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = load_session(path)
    (snap,) = session.snapshots
    assert snap["description"] == "after chat gpt-4o-mini"
    assert [m["content"] for m in snap["agent_messages"]] == [
        "You are terse.",
        "Hi there",
        "Hello! How can I help you today?",
    ]
    assert snap["system_prompt"] == "You are terse."
    assert snap["last_query"] == "Hi there"
    assert snap["last_result"] == "Hello! How can I help you today?"
    assert snap["model_info"] == {
        "type": "openai",
        "model_id": "gpt-4o-mini-2024-07-18",
        "provider": "openai",
    }


def test_streamed_output_is_recorded_too(openai_client, checkpoint):
    for _ in openai_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True):
        pass
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    conversation = load_session(path).conversation()
    assert conversation[-1]["role"] == "assistant"
    assert conversation[-1]["content"] == "Hello! How can I help you today?"
