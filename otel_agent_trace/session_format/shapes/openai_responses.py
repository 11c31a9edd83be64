"""OpenAI Responses items (``message``, ``function_call``, ``function_call_output``), to the
conventions and back: the input items of the Responses API and of the OpenAI Agents SDK."""

from __future__ import annotations

import json
from typing import Any, cast

from .neutral import neutral
from .text import parse_arguments, text_of


def to_semconv(items: list[Any]) -> list[dict[str, Any]]:
    """Responses input/output items as GenAI semconv messages."""
    out: list[dict[str, Any]] = []
    for raw in items:
        if not isinstance(raw, dict):
            continue
        item = cast("dict[str, Any]", raw)
        kind = item.get("type", "message")
        if kind == "function_call":
            part = {
                "type": "tool_call",
                "id": item.get("call_id"),
                "name": item.get("name"),
                "arguments": parse_arguments(item.get("arguments")),
            }
            out.append({"role": "assistant", "parts": [part]})
        elif kind == "function_call_output":
            part = {"type": "tool_call_response", "id": item.get("call_id"), "response": item.get("output")}
            out.append({"role": "tool", "parts": [part]})
        elif kind == "message":
            text = text_of(item.get("content"))
            out.append({"role": item.get("role", "user"), "parts": [{"type": "text", "content": text}]})
        else:
            out.append({"role": item.get("role", "assistant"), "parts": [{"type": kind}]})
    return out


def from_recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recorded messages of any shape as Responses input items (what the Agents SDK's
    ``Runner.run`` takes)."""
    items: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "tool":
            items.append(
                {"type": "function_call_output", "call_id": m.get("tool_call_id"), "output": m["content"]}
            )
            continue
        if m["content"] or not m.get("tool_calls"):
            items.append({"role": m["role"], "content": m["content"]})
        for c in m.get("tool_calls") or ():
            items.append(
                {
                    "type": "function_call",
                    "call_id": c["id"],
                    "name": c["name"],
                    "arguments": json.dumps(c["arguments"]),
                }
            )
    return items


def is_call(message: dict[str, Any]) -> bool:
    """Whether a recorded message is a ``function_call`` item."""
    return message.get("type") == "function_call"


def tool_result(call: dict[str, Any], text: str) -> dict[str, Any]:
    """The ``function_call_output`` item answering ``call`` (a neutral call) with ``text``."""
    return {"type": "function_call_output", "call_id": call["id"], "output": text}
