"""The conversation of a session for the page: its messages (text from a checkpoint file; length
and SHA-256 from a shareable one), and its turns — each model call's messages and each snapshot's —
in file order, so the page can show the conversation as it stood at any point of the run.

Both are written as they are read, to spool files the page copies in at the end, so memory holds
one turn's message ids at a time. A turn is written against the one before it (``keep`` ids of its
list, then ``add``), as the file's own compact form does: a long run's turns repeat no ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any, Protocol

import orjson

from otel_agent_trace.session_format.messages import parse_arguments, text_of

from ..jsonvalue import JSONValue

MAX_MESSAGES = 50_000  # messages kept; the rest counted
MAX_MESSAGE_CHARS = 20_000  # a message's text past this is cut
MESSAGE_BUDGET = 20_000_000  # characters of message text in all; past it each text is cut short
SHORT_MESSAGE_CHARS = 300
MAX_TURNS = 20_000  # model calls and snapshots kept
MAX_TURN_IDS = 10_000  # message ids of one turn


class _Bounded(Protocol):
    def bounded(self, value: JSONValue, depth: int = 0) -> JSONValue: ...


def _text(content: Any) -> str | None:
    """A message's text: its text parts, else the content as JSON (parts of other kinds)."""
    text = text_of(content)
    if text is None and content is not None and content != []:
        try:
            text = orjson.dumps(content, default=str).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = repr(content)
    return text


def _tool_calls(entry: dict[str, Any]) -> list[JSONValue]:
    """The tool calls a message asks for: OpenAI's ``tool_calls`` and ``tool_use`` parts."""
    calls: list[JSONValue] = []
    listed: JSONValue = entry.get("tool_calls")
    for call in listed if isinstance(listed, list) else []:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else call
        calls.append(
            {
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": parse_arguments(function.get("arguments", function.get("input"))),
            }
        )
    content: JSONValue = entry.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") in ("tool_use", "function_call", "tool_call"):
            calls.append(
                {
                    "id": part.get("id", part.get("call_id")),
                    "name": part.get("name"),
                    "arguments": parse_arguments(part.get("input", part.get("arguments"))),
                }
            )
    return calls


def _answered(entry: dict[str, Any]) -> JSONValue:
    """The tool call a message answers (``tool_call_id``, or a ``tool_result`` part's)."""
    if entry.get("tool_call_id") is not None:
        return entry.get("tool_call_id")
    content: JSONValue = entry.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") in ("tool_result", "function_call_output"):
            return part.get("tool_use_id", part.get("call_id"))
    return None


def _ids(value: JSONValue) -> list[str]:
    return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []


class Conversation:
    """Messages and turns of one session, written to ``messages`` and ``turns`` as JSON array
    items (the caller writes the brackets)."""

    def __init__(
        self, messages: IO[str], turns: IO[str], cuts: _Bounded, dumps: Callable[[Any], str]
    ) -> None:
        self.messages_out = messages
        self.turns_out = turns
        self.cuts = cuts
        self.dumps = dumps
        self.messages = self.turns = self.snapshots = 0
        self.messages_left_out = self.turns_left_out = self.texts_cut = 0
        self.budget = MESSAGE_BUDGET
        self.previous: list[str] = []
        self.full_text = False  # some message's text is in the file (a checkpoint-tier file)

    def message(self, entry: dict[str, Any], at: int) -> None:
        if self.messages >= MAX_MESSAGES:
            self.messages_left_out += 1
            return
        content = entry.get("content", entry.get("content_preview"))
        text = _text(content)
        chars = entry.get("content_chars")
        if text is not None:
            self.full_text = True
            if chars is None:
                chars = len(text)
            limit = MAX_MESSAGE_CHARS if self.budget > 0 else SHORT_MESSAGE_CHARS
            if len(text) > limit:
                self.texts_cut += 1
                text = f"{text[:limit]}… [{len(text) - limit} more characters]"
            self.budget -= len(text)
        bounded = self.cuts.bounded
        record = {
            "id": entry.get("id"),
            "role": bounded(entry.get("role")) if isinstance(entry.get("role"), str) else "?",
            "at": at,
            "parent": entry.get("parent_id"),
            "span": bounded(entry.get("span_id")),
            "text": text,
            "chars": bounded(chars),
            "sha256": bounded(entry.get("content_sha256")),
            "name": bounded(entry.get("name")) if isinstance(entry.get("name"), str) else None,
            "tool_calls": bounded(_tool_calls(entry)),
            "tool_call_id": bounded(_answered(entry)),
        }
        self._write(self.messages_out, self.messages, record)
        self.messages += 1

    def _turn(self, ids: list[str], record: dict[str, Any]) -> None:
        if self.turns >= MAX_TURNS:
            self.turns_left_out += 1
            return
        ids = ids[:MAX_TURN_IDS]
        previous = self.previous
        keep = 0
        for mine, theirs in zip(ids, previous, strict=False):
            if mine != theirs:
                break
            keep += 1
        record["keep"] = keep
        record["add"] = ids[keep:]
        record["count"] = len(ids)
        self.previous = ids
        self._write(self.turns_out, self.turns, record)
        self.turns += 1

    def call(self, span_id: Any, at: int, content: dict[str, Any]) -> None:
        """A model call's span ended: its input then output messages are a turn."""
        inputs, outputs = _ids(content.get("input_message_ids")), _ids(content.get("output_message_ids"))
        self._turn(inputs + outputs, {"kind": "call", "span": span_id, "at": at, "outputs": len(outputs)})

    def snapshot(self, entry: dict[str, Any], at: int) -> None:
        self.snapshots += 1
        number = entry.get("snapshot_id")
        record = {
            "kind": "snapshot",
            "at": at,
            "entry": entry.get("id"),
            "parent": entry.get("parent_id"),
            "span": entry.get("span_id"),
            "snapshot_id": number if type(number) is int else self.snapshots,  # else: in file order
            "description": self.cuts.bounded(entry.get("description")),
        }
        messages: JSONValue = entry.get("agent_messages")  # DevDuck's snapshots hold their messages
        ids = _ids(entry.get("message_ids"))
        if not ids and isinstance(messages, list):
            base = str(entry.get("id"))
            for number, message in enumerate(messages[:MAX_TURN_IDS]):
                if isinstance(message, dict):
                    mid = f"{base}/{number}"
                    self.message({**message, "id": mid, "parent_id": entry.get("id")}, at)
                    ids.append(mid)
        self._turn(ids, record)

    def _write(self, out: IO[str], written: int, record: dict[str, Any]) -> None:
        out.write(("," if written else "") + self.dumps(record))

    def facts(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "messages_left_out": self.messages_left_out,
            "message_texts_cut": self.texts_cut,
            "turns": self.turns,
            "turns_left_out": self.turns_left_out,
            "full_text": self.full_text,
            "max_message_chars": MAX_MESSAGE_CHARS,
        }
