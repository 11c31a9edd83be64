"""Amazon Bedrock's message shapes, to the conventions (what capture records) and back.

Converse (and Strands, and Amazon Nova's InvokeModel body) write a message as ``role`` + a list
of content blocks keyed by their kind: ``{"text": ...}``, ``{"toolUse": {"toolUseId", "name",
"input"}}``, ``{"toolResult": {"toolUseId", "content", "status"}}``, ``{"reasoningContent": ...}``,
``{"image" | "document" | "video": ...}``, ``{"cachePoint": ...}``. InvokeModel's Anthropic body
uses Anthropic's blocks (``{"type": "text", ...}``); other model families' bodies carry a string
content, or OpenAI's chat shape (gpt-oss, Jamba). All are read by :func:`to_semconv`. Converse's
shape is Strands' (:mod:`.strands`): :func:`from_recorded` is that module's.
"""

from __future__ import annotations

from typing import Any, cast

from .anthropic import to_semconv as anthropic_to_semconv
from .openai_chat import to_semconv as openai_chat_to_semconv
from .strands import from_recorded

__all__ = ["from_recorded", "to_semconv"]

_SKIPPED = frozenset(("cachePoint",))


def _block_part(block: dict[str, Any]) -> dict[str, Any] | None:
    if "text" in block and len(block) == 1:
        return {"type": "text", "content": block["text"]}
    use = block.get("toolUse")
    if isinstance(use, dict):
        u = cast("dict[str, Any]", use)
        return {
            "type": "tool_call",
            "id": u.get("toolUseId"),
            "name": u.get("name"),
            "arguments": u.get("input"),
        }
    result = block.get("toolResult")
    if isinstance(result, dict):
        r = cast("dict[str, Any]", result)
        return {"type": "tool_call_response", "id": r.get("toolUseId"), "response": r.get("content")}
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = cast("dict[str, Any]", reasoning).get("reasoningText")
        content = cast("dict[str, Any]", text).get("text") if isinstance(text, dict) else None
        return {"type": "reasoning", "content": content}
    for key in block:
        return None if key in _SKIPPED else {"type": key}
    return None


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """Converse messages (or an InvokeModel body's messages) as semconv messages."""
    out: list[dict[str, Any]] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        m = cast("dict[str, Any]", raw)
        content = m.get("content")
        if "tool_calls" in m or m.get("role") == "tool":  # an OpenAI-shaped body (gpt-oss, Jamba)
            out.extend(openai_chat_to_semconv([m]))
            continue
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append({"type": "text", "content": content})
        elif isinstance(content, list):
            for item in cast("list[Any]", content):
                if not isinstance(item, dict):
                    continue
                block = cast("dict[str, Any]", item)
                if "type" in block:  # Anthropic's blocks (InvokeModel with an Anthropic body)
                    converted = anthropic_to_semconv([{"role": "user", "content": [block]}])
                    parts.extend(converted[0]["parts"] if converted else ())
                    continue
                part = _block_part(block)
                if part is not None:
                    parts.append(part)
        message: dict[str, Any] = {"role": m.get("role", "user"), "parts": parts}
        if m.get("stop_reason"):
            message["finish_reason"] = m["stop_reason"]
        out.append(message)
    return out
