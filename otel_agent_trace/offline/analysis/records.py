"""The small records the pass keeps: a group of spans' :class:`Stat`, a :class:`Failure` and whether
it was recovered, a :class:`Verification`, a repeated tool call (:class:`LoopKey`) and the run's
final :class:`Answer`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, TypedDict

from ..jsonvalue import JSONValue
from .values import as_int, as_text, preview


class Answer(TypedDict):
    """A run's final answer: its text when the file has it, else its length and SHA-256."""

    text: str | None
    chars: int
    sha256: str | None


def arguments_digest(key: int) -> str:
    """The arguments key as hex (for output)."""
    return f"{key:012x}"


@dataclass(slots=True)
class Stat:
    """Count, total and longest duration, errors and tokens of a group of spans."""

    count: int = 0
    total_ns: int = 0
    max_ns: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0

    def add(self, duration: int, error: bool) -> None:
        self.count += 1
        self.total_ns += duration
        if duration > self.max_ns:
            self.max_ns = duration
        if error:
            self.errors += 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "count": self.count,
            "errors": self.errors,
            "total_s": round(self.total_ns / 1e9, 6),
            "mean_s": round(self.total_ns / self.count / 1e9, 6) if self.count else 0.0,
            "max_s": round(self.max_ns / 1e9, 6),
        }
        if self.input_tokens or self.output_tokens or self.cache_read_tokens:
            out["input_tokens"] = self.input_tokens
            out["output_tokens"] = self.output_tokens
            if self.cache_read_tokens:
                out["cache_read_tokens"] = self.cache_read_tokens
        return out


@dataclass
class Failure:
    """One failure seen in the run, with the key a later success of the same thing clears."""

    stage: str
    key: str
    entry_id: str
    name: str
    reason: str
    ts: int
    recovered: bool = False

    def to_dict(self, start_ts: int) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "entry_id": self.entry_id,
            "name": self.name,
            "reason": self.reason,
            "at_s": round((self.ts - start_ts) / 1e9, 3) if self.ts and start_ts else None,
            "recovered": self.recovered,
        }


@dataclass
class Verification:
    kind: str
    command: str
    passed: bool
    entry_id: str
    ts: int


@dataclass(slots=True)
class LoopKey:
    """A tool call made more than once with the same arguments."""

    tool: str
    digest: int  # the arguments' length and CRC-32
    count: int
    failed: int
    streak: int
    max_streak: int
    first_entry: str
    seen: int  # the order in which the call was first made


def answer(content: JSONValue, chars: JSONValue, sha: JSONValue) -> Answer:
    """A final answer: its text when the file has it, else its length and SHA-256."""
    if isinstance(content, str):
        return {
            "text": content,
            "chars": len(content),
            "sha256": hashlib.sha256(content.encode()).hexdigest(),
        }
    if content is not None:
        text = preview(content, 10_000)
        return {"text": text, "chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return {"text": None, "chars": as_int(chars), "sha256": as_text(sha) or None}
