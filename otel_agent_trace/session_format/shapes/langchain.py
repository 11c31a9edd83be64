"""LangChain messages as dicts (``role``, ``content``, ``tool_calls`` with ``name`` and
``args``), to the conventions. Back, LangChain takes message objects: ``to_langchain`` in
``offline/resume/sdk_objects.py`` builds them from the neutral form (:mod:`.neutral`), which reads
these dicts."""

from __future__ import annotations

from typing import Any, cast


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """LangChain message dicts (``role``, ``content``, ``tool_calls``) as semconv messages."""
    out: list[dict[str, Any]] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        m = cast("dict[str, Any]", raw)
        parts: list[dict[str, Any]] = []
        content = m.get("content")
        if m.get("role") == "tool":
            parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content})
        elif isinstance(content, str):
            if content:
                parts.append({"type": "text", "content": content})
        elif isinstance(content, list):
            pieces = cast("list[Any]", content)
            for p in pieces:
                if isinstance(p, str):
                    parts.append({"type": "text", "content": p})
                elif isinstance(p, dict):
                    piece = cast("dict[str, Any]", p)
                    if piece.get("type") == "text":
                        parts.append({"type": "text", "content": piece.get("text")})
        calls: Any = m.get("tool_calls") or ()
        for call in calls:
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("arguments"),
                }
            )
        out.append({"role": m.get("role"), "parts": parts})
    return out
