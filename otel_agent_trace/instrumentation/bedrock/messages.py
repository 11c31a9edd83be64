"""Bedrock's message shapes as GenAI semantic-convention messages (``role`` + ``parts``).

Converse (and Strands, and Amazon Nova's InvokeModel body) write a message as ``role`` + a list
of content blocks keyed by their kind: ``{"text": ...}``, ``{"toolUse": {"toolUseId", "name",
"input"}}``, ``{"toolResult": {"toolUseId", "content", "status"}}``, ``{"reasoningContent": ...}``,
``{"image" | "document" | "video": ...}``, ``{"cachePoint": ...}``. InvokeModel's Anthropic body
uses Anthropic's blocks (``{"type": "text", ...}``); other model families' bodies carry a
string content. All three are read here. Pure functions over plain dicts.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace.session_format.messages import anthropic_to_semconv, openai_chat_to_semconv

_SKIPPED = frozenset(("cachePoint",))


def _block_part(block: dict[str, Any]) -> dict[str, Any] | None:
    if "text" in block and len(block) == 1:
        return {"type": "text", "content": block["text"]}
    use = block.get("toolUse")
    if isinstance(use, dict):
        return {
            "type": "tool_call",
            "id": use.get("toolUseId"),
            "name": use.get("name"),
            "arguments": use.get("input"),
        }
    result = block.get("toolResult")
    if isinstance(result, dict):
        return {
            "type": "tool_call_response",
            "id": result.get("toolUseId"),
            "response": result.get("content"),
        }
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        content = text.get("text") if isinstance(text, dict) else None
        return {"type": "reasoning", "content": content}
    for key in block:
        return None if key in _SKIPPED else {"type": key}
    return None


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    """Converse messages (or an InvokeModel body's messages) as semconv messages."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if "tool_calls" in m or m.get("role") == "tool":  # an OpenAI-shaped body (gpt-oss, Jamba)
            out.extend(openai_chat_to_semconv([m]))
            continue
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append({"type": "text", "content": content})
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if "type" in block:  # Anthropic's blocks (InvokeModel with an Anthropic body)
                    converted = anthropic_to_semconv([{"role": "user", "content": [block]}])
                    parts.extend(converted[0]["parts"] if converted else ())
                    continue
                part = _block_part(block)
                if part is not None:
                    parts.append(part)
        item: dict[str, Any] = {"role": m.get("role", "user"), "parts": parts}
        if m.get("stop_reason"):
            item["finish_reason"] = m["stop_reason"]
        out.append(item)
    return out
