"""Strands messages (``content`` a list of blocks: ``text``, ``toolUse``, ``toolResult``): the
shape a Strands or DevDuck agent keeps in ``agent.messages``. They are recorded as they are; the
neutral form (:mod:`.neutral`) reads them."""

from __future__ import annotations

from typing import Any, cast

from .neutral import neutral
from .text import blocks_of


def from_recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recorded messages as Strands messages; messages already in that shape are kept (Strands
    keeps metadata beside them)."""
    if all(isinstance(m.get("content"), list) and m.get("role") in ("user", "assistant") for m in messages):
        return [dict(m) for m in messages]
    out: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {
                "toolResult": {
                    "toolUseId": m.get("tool_call_id"),
                    "status": "success",
                    "content": [{"text": m["content"]}],
                }
            }
            last: list[dict[str, Any]] = out[-1]["content"] if out else []
            if out and out[-1]["role"] == "user" and all("toolResult" in b for b in last):
                last.append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        blocks: list[dict[str, Any]] = [{"text": m["content"]}] if m["content"] else []
        blocks += [
            {"toolUse": {"toolUseId": c["id"], "name": c["name"], "input": c["arguments"]}}
            for c in m.get("tool_calls") or ()
        ]
        out.append({"role": m["role"], "content": blocks})
    return out


def makes_calls(message: dict[str, Any]) -> bool:
    """Whether a recorded message holds Strands ``toolUse`` blocks."""
    return any("toolUse" in b for b in blocks_of(message.get("content")))


def tool_result(call: dict[str, Any], value: Any, text: str, failed: bool) -> dict[str, Any]:
    """The user message answering ``call`` (a neutral call) with a ``toolResult`` block: the
    tool's own blocks when it returned a list of them, else ``text``."""
    blocks: list[Any] | None = None
    if isinstance(value, list) and all(isinstance(b, dict) for b in cast("list[Any]", value)):
        blocks = cast("list[Any]", value)
    result = {
        "toolUseId": call["id"],
        "status": "error" if failed else "success",
        "content": blocks or [{"text": text}],
    }
    return {"role": "user", "content": [{"toolResult": result}]}
