"""Message normalisation: each SDK's message shape as GenAI semantic-convention messages
(``role`` + ``parts``). Pure functions over plain dicts, shared by capture (span attributes) and by
readers (diff, resume), so they live with the format and import no SDK and no OpenTelemetry."""

from __future__ import annotations

import json
from typing import Any, cast


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as JSON when they are a JSON string, else as given."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def text_of(content: Any) -> str | None:
    """The text of a message content (a string, or a list of text parts of any of the SDKs)."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        parts = cast("list[Any]", content)
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                block = cast("dict[str, Any]", part)
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
        return "".join(texts) if texts else None
    return None


def openai_chat_to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
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


def openai_responses_to_semconv(items: list[Any]) -> list[dict[str, Any]]:
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


def anthropic_to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
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


def langchain_to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
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
