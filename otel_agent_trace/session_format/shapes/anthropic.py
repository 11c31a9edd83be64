"""Anthropic messages (``content`` blocks: ``text``, ``tool_use``, ``tool_result``,
``thinking``; the system prompt apart), to the conventions and back."""

from __future__ import annotations

from typing import Any, cast

from .neutral import neutral
from .text import blocks_of


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """Anthropic messages as GenAI semconv messages (``role`` + ``parts``)."""
    out: list[dict[str, Any]] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        m = cast("dict[str, Any]", raw)
        content = m.get("content")
        parts: list[dict[str, Any]] = []
        blocks: Any = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            b = cast("dict[str, Any]", block)
            kind = b.get("type")
            if kind == "text":
                parts.append({"type": "text", "content": b.get("text")})
            elif kind == "tool_use":
                parts.append(
                    {
                        "type": "tool_call",
                        "id": b.get("id"),
                        "name": b.get("name"),
                        "arguments": b.get("input"),
                    }
                )
            elif kind == "tool_result":
                parts.append(
                    {"type": "tool_call_response", "id": b.get("tool_use_id"), "response": b.get("content")}
                )
            elif kind == "thinking":
                parts.append({"type": "reasoning", "content": b.get("thinking")})
            else:
                parts.append({"type": kind or "unknown"})
        item: dict[str, Any] = {"role": m.get("role", "user"), "parts": parts}
        if m.get("stop_reason"):
            item["finish_reason"] = m["stop_reason"]
        out.append(item)
    return out


def from_recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recorded messages of any shape as Anthropic messages (system messages left out: Anthropic
    takes the system prompt apart)."""
    out: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": m["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                cast("list[dict[str, Any]]", out[-1]["content"]).append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if m["role"] == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m["content"] else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def makes_calls(message: dict[str, Any]) -> bool:
    """Whether a recorded message holds Anthropic ``tool_use`` blocks."""
    return any(b.get("type") == "tool_use" for b in blocks_of(message.get("content")))


def tool_result(call: dict[str, Any], text: str, failed: bool) -> dict[str, Any]:
    """The user message answering ``call`` (a neutral call) with a ``tool_result`` block."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"], "content": text}
    if failed:
        block["is_error"] = True
    return {"role": "user", "content": [block]}
