"""DM-Code-Agent's JSONL session: ``{"id", "parent_id", "timestamp" (ISO-8601 UTC), "run_id",
"event", "payload"}``. Files written before schema 2.0 have no ids: they get ``legacy-0000``,
``legacy-0001``, … by position, each under the one before. ``payload``'s fields go beside ours.

DM never parses ``timestamp`` (its own tests write ``"t0"``; order is file order, durations come
from ``run_end``'s ``duration_seconds``): a timestamp that is not ISO-8601 is read as no time
(``ts`` 0), never refused."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ._checks import flatten, mapping, text

NAME = "dm-code-agent"
END_TYPES = frozenset({"run_end"})
SNAPSHOT_TYPES = frozenset({"checkpoint"})
_TOOL = frozenset({"tool_call", "step", "observation_truncated", "edit_guard", "edit_noop"})
_SYS = frozenset({"file_backup"})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def matches(raw: dict[str, Any]) -> bool:
    return (
        "event" in raw and "type" not in raw and ("payload" in raw or "run_id" in raw or "timestamp" in raw)
    )


def layer_of(event: str) -> str:
    if event in _TOOL:
        return "tool"
    if event in _SYS:
        return "sys"
    return "agent"


def parse_timestamp(value: Any) -> int:
    """ISO-8601 (naive means UTC) to nanoseconds since the epoch; 0 (time unknown) when there is
    none or it is not ISO-8601 (DM itself never reads it)."""
    if not isinstance(value, str):
        return 0
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


class Normalizer:
    def __init__(self) -> None:
        self.seq = 0
        self.previous = ""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        event = text(raw, "event", required=True)
        payload = mapping(raw, "payload")
        entry_id = text(raw, "id")
        if entry_id:
            parent_id = text(raw, "parent_id", default="")
        else:  # pre-2.0: no ids
            entry_id = f"legacy-{self.seq:04d}"
            parent_id = self.previous
        self.seq += 1
        self.previous = entry_id
        entry: dict[str, Any] = {
            "id": entry_id,
            "parent_id": parent_id,
            "type": event,
            "layer": layer_of(event or ""),
            "ts": parse_timestamp(raw.get("timestamp")),
            "run_id": text(raw, "run_id"),
        }
        return flatten(entry, payload)
