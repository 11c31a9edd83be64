"""The neutral form every SDK's shape is made from when a conversation is given back: recorded
messages of any shape (OpenAI chat, Anthropic, Strands, LangChain, Responses items, Gemini) as
``{"role", "content", "tool_calls": [{"id", "name", "arguments"}], "tool_call_id", "name"}``,
a tool result a message of its own (``role`` ``tool``)."""

from __future__ import annotations

import json
from typing import Any, cast

from .text import blocks_of, call_arguments, flat_text


def neutral(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` of any recorded shape in the neutral form."""
    out: list[dict[str, Any]] = []
    for m in messages:
        out += _one(m)
    return out


def _one(m: dict[str, Any]) -> list[dict[str, Any]]:
    kind = m.get("type")
    if kind == "function_call":  # a Responses item
        call = {
            "id": m.get("call_id"),
            "name": m.get("name"),
            "arguments": call_arguments(m.get("arguments")),
        }
        return [{"role": "assistant", "content": "", "tool_calls": [call]}]
    if kind == "function_call_output":
        return [{"role": "tool", "content": flat_text(m.get("output")), "tool_call_id": m.get("call_id")}]
    role = m.get("role") or "user"
    if role == "model":  # Gemini
        role = "assistant"
    content = m.get("content")
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    if isinstance(content, list):
        for raw in cast("list[Any]", content):
            if not isinstance(raw, dict):
                texts.append(str(raw))
                continue
            block = cast("dict[str, Any]", raw)
            if "toolUse" in block:  # Strands
                use: dict[str, Any] = block["toolUse"]
                calls.append(
                    {"id": use.get("toolUseId"), "name": use.get("name"), "arguments": use.get("input")}
                )
            elif "toolResult" in block:
                res: dict[str, Any] = block["toolResult"]
                results.append({"id": res.get("toolUseId"), "content": flat_text(res.get("content"))})
            elif block.get("type") == "tool_use":  # Anthropic
                calls.append(
                    {"id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
                )
            elif block.get("type") == "tool_result":
                results.append({"id": block.get("tool_use_id"), "content": flat_text(block.get("content"))})
            elif isinstance(block.get("function_call"), dict):  # Gemini
                fc: dict[str, Any] = block["function_call"]
                calls.append({"id": fc.get("id"), "name": fc.get("name"), "arguments": fc.get("args")})
            elif isinstance(block.get("function_response"), dict):
                fr: dict[str, Any] = block["function_response"]
                answer = json.dumps(fr.get("response"), ensure_ascii=False, default=str)
                results.append({"id": fr.get("id"), "content": answer, "name": fr.get("name")})
            elif block.get("thought") is True:
                continue  # Gemini's thinking: not part of what is sent back
            elif isinstance(block.get("text"), str):
                texts.append(block["text"])
    else:
        texts.append(flat_text(content))
    for call in blocks_of(m.get("tool_calls") or []):  # OpenAI chat, LangChain
        fn: dict[str, Any] = call.get("function") or {}
        calls.append(
            {
                "id": call.get("id"),
                "name": call.get("name") or fn.get("name"),
                "arguments": call_arguments(call.get("arguments", call.get("args", fn.get("arguments")))),
            }
        )
    if role == "tool":
        named = {"name": m["name"]} if m.get("name") else {}
        return [{"role": "tool", "content": "".join(texts), "tool_call_id": m.get("tool_call_id"), **named}]
    out = [
        {"role": "tool", "content": res["content"], "tool_call_id": res["id"]}
        | ({"name": res["name"]} if res.get("name") else {})
        for res in results
    ]
    if texts or calls or not results:
        item: dict[str, Any] = {"role": role, "content": "".join(texts)}
        if calls:
            item["tool_calls"] = calls
        if m.get("name"):
            item["name"] = m["name"]
        out.append(item)
    return out


def tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls a recorded message makes (neutral: ``id``, ``name``, ``arguments``)."""
    return [c for m in _one(message) for c in m.get("tool_calls") or ()]


def result_ids(message: dict[str, Any]) -> list[Any]:
    """The call ids of the tool results a recorded message holds."""
    return [m.get("tool_call_id") for m in _one(message) if m["role"] == "tool"]


def is_result(message: dict[str, Any]) -> bool:
    """Whether a recorded message holds tool results only."""
    converted = _one(message)
    return bool(converted) and all(m["role"] == "tool" for m in converted)
