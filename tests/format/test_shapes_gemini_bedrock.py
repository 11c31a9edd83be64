"""Gemini's and Amazon Bedrock's message shapes in :mod:`otel_agent_trace.session_format.shapes`
(where every SDK's conversion lives), as capture records them and back; and the session format
still free of the SDKs (no ``google`` or ``boto`` import reaches it)."""

from __future__ import annotations

import ast
from pathlib import Path

from otel_agent_trace.session_format.messages import bedrock_converse_to_semconv, gemini_to_semconv
from otel_agent_trace.session_format.shapes import bedrock_converse, gemini
from otel_agent_trace.session_format.shapes.neutral import neutral

GEMINI = [
    {"role": "user", "content": [{"text": "What's the weather in Paris?"}]},
    {
        "role": "model",
        "content": [
            {"text": "Let me see.", "thought": True},
            {"function_call": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"function_response": {"id": "call_1", "name": "get_weather", "response": {"result": "18°C"}}}
        ],
    },
    {"role": "model", "content": [{"text": "It is 18°C."}, {"inline_data": {"mime_type": "image/png"}}]},
]

CONVERSE = [
    {
        "role": "user",
        "content": [{"text": "What's the weather in Paris?"}, {"cachePoint": {"type": "default"}}],
    },
    {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "Let me see."}}},
            {"toolUse": {"toolUseId": "tu_1", "name": "get_weather", "input": {"city": "Paris"}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "tu_1", "content": [{"text": "18°C"}], "status": "success"}}
        ],
    },
    {"role": "assistant", "content": [{"text": "It is 18°C."}, {"image": {"format": "png"}}]},
]


def test_gemini_messages_to_the_conventions():
    assert gemini_to_semconv is gemini.to_semconv
    assert gemini_to_semconv([*GEMINI, "not a message"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Let me see."},
                {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": {"result": "18°C"}}],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": "It is 18°C."}, {"type": "inline_data"}]},
    ]


def test_recorded_messages_of_any_shape_as_gemini_messages():
    openai_chat = [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
        {"role": "assistant", "content": "It is 18°C."},
    ]
    assert gemini.from_recorded(openai_chat) == [
        {"role": "user", "content": [{"text": "What's the weather in Paris?"}]},
        {
            "role": "model",
            "content": [
                {"function_call": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}}
            ],
        },
        {
            "role": "user",
            "content": [
                {"function_response": {"id": "call_1", "name": "get_weather", "response": {"result": "18°C"}}}
            ],
        },
        {"role": "model", "content": [{"text": "It is 18°C."}]},
    ]
    # Gemini's own recording comes back as it went in (thinking left out: it is not sent back)
    back = gemini.from_recorded(GEMINI)
    assert back[1] == {"role": "model", "content": [GEMINI[1]["content"][1]]}
    assert back[2] == GEMINI[2] and back[0] == GEMINI[0]
    assert neutral(back) == neutral(
        [GEMINI[0], {"role": "model", "content": [GEMINI[1]["content"][1]]}, *GEMINI[2:]]
    )


def test_bedrock_messages_to_the_conventions_and_back():
    assert bedrock_converse_to_semconv is bedrock_converse.to_semconv
    assert bedrock_converse_to_semconv(CONVERSE) == [
        {"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Let me see."},
                {"type": "tool_call", "id": "tu_1", "name": "get_weather", "arguments": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "parts": [{"type": "tool_call_response", "id": "tu_1", "response": [{"text": "18°C"}]}],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": "It is 18°C."}, {"type": "image"}]},
    ]
    # InvokeModel bodies: Anthropic's blocks, a string content, OpenAI's chat shape
    bodies = [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": "Hello", "stop_reason": "end_turn"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    converted = bedrock_converse_to_semconv(bodies)
    assert converted[0] == {"role": "user", "parts": [{"type": "text", "content": "Hi"}]}
    assert converted[1] == {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Hello"}],
        "finish_reason": "end_turn",
    }
    assert converted[2]["role"] == "tool" and converted[2]["parts"][0]["id"] == "c1"
    # back: Converse's shape is Strands'
    assert bedrock_converse.from_recorded(CONVERSE) == CONVERSE
    from_chat = bedrock_converse.from_recorded(
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    )
    assert from_chat == [
        {"role": "user", "content": [{"text": "Hi"}]},
        {"role": "assistant", "content": [{"text": "Hello"}]},
    ]


def test_the_session_format_imports_no_sdk():
    root = Path(__file__).resolve().parents[2] / "otel_agent_trace" / "session_format"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                assert name.split(".")[0] not in ("google", "boto3", "botocore"), (path, name)
