"""OpenAI chat-completions messages (``role``, ``content``, ``tool_calls`` with ``function``,
``tool`` messages with ``tool_call_id``), to the conventions and back. The shape a plain callable,
CrewAI's ``kickoff`` and LlamaIndex's OpenAI LLM (``offline/resume/sdk_objects.py``) are given."""

from __future__ import annotations

import json
from typing import Any, cast

from .neutral import neutral
from .text import parse_arguments


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """Chat messages as GenAI semconv messages (``role`` + ``parts``)."""
    out: list[dict[str, Any]] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        m = cast("dict[str, Any]", raw)
        role = m.get("role", "user")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append(
                {"type": "tool_call_response", "id": m.get("tool_call_id"), "response": m.get("content")}
            )
        else:
            content = m.get("content")
            if isinstance(content, str):
                parts.append({"type": "text", "content": content})
            elif isinstance(content, list):
                pieces = cast("list[Any]", content)
                for p in pieces:
                    piece = cast("dict[str, Any]", p) if isinstance(p, dict) else {}
                    if piece.get("type") == "text":
                        parts.append({"type": "text", "content": piece.get("text")})
                    else:
                        kind = piece.get("type", "unknown") if isinstance(p, dict) else "unknown"
                        parts.append({"type": kind})
            calls: list[Any] = m.get("tool_calls") or []
            for call in calls:
                fn: dict[str, Any] = call.get("function") or {}
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("id"),
                        "name": fn.get("name"),
                        "arguments": parse_arguments(fn.get("arguments")),
                    }
                )
        item: dict[str, Any] = {"role": role, "parts": parts}
        if "finish_reason" in m:
            item["finish_reason"] = m["finish_reason"]
        out.append(item)
    return out


def from_recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recorded messages of any shape as OpenAI chat messages."""
    out: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m.get("tool_call_id"), "content": m["content"]})
            continue
        item: dict[str, Any] = {"role": m["role"], "content": m["content"]}
        if m.get("tool_calls"):
            item["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in m["tool_calls"]
            ]
        out.append(item)
    return out


def tool_result(call: dict[str, Any], text: str) -> dict[str, Any]:
    """The ``tool`` message answering ``call`` (a neutral call) with ``text``."""
    out = {"role": "tool", "tool_call_id": call["id"], "content": text}
    if call.get("name"):
        out["name"] = call["name"]
    return out
