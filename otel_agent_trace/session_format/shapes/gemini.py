"""Gemini messages (``google-genai``'s ``Content``), as capture records them: ``{"role": "user" |
"model", "content": [parts]}``, a part as the SDK dumps it (``{"text": ...}`` with ``thought`` for
thinking, ``{"function_call": {"id", "name", "args"}}``, ``{"function_response": {"id", "name",
"response"}}``, ``{"inline_data": ...}``, …); to the conventions and back."""

from __future__ import annotations

import json
from typing import Any, cast

from .neutral import neutral


def _part(part: dict[str, Any]) -> dict[str, Any]:
    if isinstance(part.get("text"), str):
        return {"type": "reasoning" if part.get("thought") else "text", "content": part["text"]}
    call = part.get("function_call")
    if isinstance(call, dict):
        c = cast("dict[str, Any]", call)
        return {"type": "tool_call", "id": c.get("id"), "name": c.get("name"), "arguments": c.get("args")}
    response = part.get("function_response")
    if isinstance(response, dict):
        r = cast("dict[str, Any]", response)
        return {"type": "tool_call_response", "id": r.get("id"), "response": r.get("response")}
    return {"type": next(iter(part), "unknown")}


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """Gemini messages as GenAI semconv messages (``role`` + ``parts``; ``model`` is
    ``assistant``)."""
    out: list[dict[str, Any]] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        m = cast("dict[str, Any]", raw)
        parts = [_part(cast("dict[str, Any]", p)) for p in m.get("content") or () if isinstance(p, dict)]
        role = m.get("role")
        out.append({"role": "assistant" if role == "model" else role, "parts": parts})
    return out


def from_recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recorded messages of any shape as Gemini messages (system messages left out: Gemini takes
    the system instruction apart): a tool result is a ``function_response`` part of a user turn
    (a JSON object answer as it is, anything else as ``{"result": text}``), named after its call."""
    out: list[dict[str, Any]] = []
    names: dict[Any, Any] = {}
    for m in neutral(messages):
        role = m["role"]
        if role == "system":
            continue
        if role == "tool":
            call_id = m.get("tool_call_id")
            try:
                response = json.loads(m["content"])
            except ValueError:
                response = None
            if not isinstance(response, dict):
                response = {"result": m["content"]}
            response = cast("dict[str, Any]", response)
            name = m.get("name") or names.get(call_id, "tool")
            part: dict[str, Any] = {"function_response": {"id": call_id, "name": name, "response": response}}
            last: list[dict[str, Any]] = out[-1]["content"] if out else []
            if out and out[-1]["role"] == "user" and all("function_response" in p for p in last):
                last.append(part)
            else:
                out.append({"role": "user", "content": [part]})
            continue
        parts: list[dict[str, Any]] = [{"text": m["content"]}] if m["content"] else []
        for c in m.get("tool_calls") or ():
            names[c["id"]] = c["name"]
            parts.append({"function_call": {"id": c["id"], "name": c["name"], "args": c["arguments"]}})
        out.append({"role": "model" if role == "assistant" else "user", "content": parts})
    return out
