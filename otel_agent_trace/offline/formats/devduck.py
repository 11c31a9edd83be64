"""DevDuck's session ZIP (devduck 1.15.7): ``events.jsonl`` lines of
``{"timestamp_ns", "layer", "event_type", "data", "trace_id"}`` with no ids. Each event becomes an
entry of its own type (``file.open``, ``tool.call``, ``snapshot.created``, …) with id
``devduck-0000``, ``devduck-0001``, … (by position) under the first event, and ``data``'s fields
beside ours. ``session.pkl`` is never read."""

from __future__ import annotations

from typing import Any

from ._checks import BadEntry, flatten, integer, mapping, text

NAME = "devduck"
END_TYPES = frozenset({"session.stop"})
SNAPSHOT_TYPES = frozenset({"snapshot.created"})
LAYERS = frozenset({"agent", "tool", "sys"})


def matches(raw: dict[str, Any]) -> bool:
    return "event_type" in raw and "timestamp_ns" in raw and "type" not in raw


class Normalizer:
    def __init__(self) -> None:
        self.seq = 0
        self.root = ""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        if "event_type" not in raw:
            raise BadEntry("not a DevDuck event (no 'event_type')")
        ts = integer(raw, "timestamp_ns", required=True)
        kind = text(raw, "event_type", required=True)
        layer = text(raw, "layer", default="")
        data = mapping(raw, "data")
        entry_id = f"devduck-{self.seq:04d}"
        self.seq += 1
        entry: dict[str, Any] = {
            "id": entry_id,
            "parent_id": self.root,
            "type": kind,
            "layer": layer,
            "ts": ts,
            "trace_id": text(raw, "trace_id"),
        }
        if not self.root:
            self.root = entry_id
        return flatten(entry, data)


def duration_s(events: list[Any], metadata: dict[str, Any]) -> float | None:
    """``session.stop``'s own duration, else ``metadata.json``'s."""
    for event in reversed(events):
        if event.type in END_TYPES:
            value = event.data.get("duration")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    value = metadata.get("duration_seconds")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None
