"""DevDuck's session ZIP (devduck 1.15.7): ``events.jsonl`` lines of
``{"timestamp_ns", "layer", "event_type", "data", "trace_id"}`` with no ids. Each event becomes an
entry of its own type (``file.open``, ``tool.call``, ``snapshot.created``, …) with id
``devduck-0000``, ``devduck-0001``, … (by position) under the ``session.start`` event, and
``data``'s fields beside ours. ``session.pkl`` is never read.

DevDuck keeps its events in a ring of :data:`RING` and drops the oldest silently, ``session.start``
first. A file whose first event is not ``session.start`` lost its start: its events have no parent
(none of them is the parent of the others), and its first entry carries what ``metadata.json``
says of the session (``session_id``, ``total_events``) as ``evicted_start``, so readers name the
session and count what was dropped (:func:`evicted`)."""

from __future__ import annotations

from typing import Any

from ._checks import BadEntry, flatten, integer, mapping, text

NAME = "devduck"
START = "session.start"
END_TYPES = frozenset({"session.stop"})
RING = 10_000  # devduck 1.15.7's EventBuffer(max_events=10000)
EVICTED_START_KEYS = ("session_id", "total_events")
SNAPSHOT_TYPES = frozenset({"snapshot.created"})
LAYERS = frozenset({"agent", "tool", "sys"})


def matches(raw: dict[str, Any]) -> bool:
    return "event_type" in raw and "timestamp_ns" in raw and "type" not in raw


class Normalizer:
    def __init__(self, metadata: dict[str, Any] | None = None) -> None:
        self.seq = 0
        self.root = ""
        self.metadata = metadata  # the ZIP's metadata.json, when there is one

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
        if self.seq == 1:
            if kind == START:
                self.root = entry_id
            elif self.metadata:  # the ring dropped session.start: the session is named here
                entry["evicted_start"] = {k: self.metadata.get(k) for k in EVICTED_START_KEYS}
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


def evicted(present: int, stopped: bool, metadata: dict[str, Any], stop_count: Any = None) -> int:
    """How many events DevDuck's ring dropped: it counted every event recorded before
    ``session.stop`` (``metadata.json``'s ``total_events``, or the stop's own ``events``), the stop
    itself not; ``events.jsonl`` holds ``present`` of them."""
    total = metadata.get("total_events")
    if isinstance(total, bool) or not isinstance(total, int):
        total = stop_count if isinstance(stop_count, int) and not isinstance(stop_count, bool) else None
    if total is None:
        return 0
    return max(total + (1 if stopped else 0) - present, 0)
