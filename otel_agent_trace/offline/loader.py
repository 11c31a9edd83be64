"""Reading sessions back: JSONL files (ours, live or torn) and session ZIPs. Never runs code
from a file: JSON only, no pickle."""

from __future__ import annotations

import os
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format import iter_entries


class SessionReadWarning(UserWarning):
    """A session file had something the reader tolerated (a torn last line, a skipped bad line)."""


@dataclass
class Event:
    """One entry, with DevDuck's field names (``timestamp_ns``, ``layer``, ``event_type``, ``data``)."""

    id: str
    parent_id: str
    type: str
    layer: str
    timestamp_ns: int
    data: dict[str, Any]

    @property
    def event_type(self) -> str:
        """The event's name for span events (``file.open``, …), otherwise the entry type."""
        return self.data.get("name", self.type) if self.type == fmt.SPAN_EVENT else self.type

    @property
    def trace_id(self) -> str | None:
        return self.data.get("trace_id")

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Event:
        return cls(
            id=str(entry.get("id", "")),
            parent_id=str(entry.get("parent_id") or ""),
            type=str(entry.get("type", "")),
            layer=str(entry.get("layer", "")),
            timestamp_ns=int(entry.get("ts") or 0),
            data=entry,
        )


@dataclass
class SpanRecord:
    """A span put back together from its ``span.start`` / ``span.end`` entries."""

    span_id: str
    trace_id: str
    name: str
    layer: str
    parent_span_id: str | None
    start_ns: int
    end_ns: int | None = None
    status: str = fmt.STATUS_UNFINISHED
    status_description: str | None = None
    kind: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    entry_id: str = ""
    parent_entry_id: str = ""

    @property
    def finished(self) -> bool:
        return self.end_ns is not None

    @property
    def duration_s(self) -> float | None:
        return None if self.end_ns is None else (self.end_ns - self.start_ns) / 1e9


class LoadedSession:
    """A recorded session read back from its JSONL file or ZIP."""

    def __init__(self, path: str | os.PathLike[str], *, strict: bool = False):
        self.path = Path(path)
        self.issues: list[fmt.ReadIssue] = []
        self.events: list[Event] = [
            Event.from_entry(e) for e in iter_entries(self.path, self.issues, strict=strict)
        ]
        if not self.events:
            raise fmt.SessionFormatError(self.path, None, "no session entries")
        for issue in self.issues:  # tolerated (a torn last line, …), but the reader must hear of it
            warnings.warn(str(issue), SessionReadWarning, stacklevel=3)
        self._by_id = {e.id: e for e in self.events}
        self._zip_snapshots: list[dict[str, Any]] | None = None
        self._zip_metadata: dict[str, Any] | None = None
        if zipfile.is_zipfile(self.path):
            self._read_zip_extras()

    def _read_zip_extras(self) -> None:
        with zipfile.ZipFile(self.path) as zf:
            names = set(zf.namelist())
            for member, attr in ((fmt.ZIP_SNAPSHOTS, "_zip_snapshots"), (fmt.ZIP_METADATA, "_zip_metadata")):
                if member in names:
                    try:
                        setattr(self, attr, orjson.loads(zf.read(member)))
                    except (orjson.JSONDecodeError, zipfile.BadZipFile, zlib.error) as exc:
                        raise fmt.SessionFormatError(self.path, None, f"{member}: {exc}") from None

    # --- DevDuck's API -------------------------------------------------------------------------

    @property
    def root(self) -> Event:
        return self.events[0]

    @property
    def session_id(self) -> str:
        return str(self.root.data.get("session_id") or self.metadata.get("session_id") or self.path.stem)

    @property
    def tier(self) -> str:
        return str(self.root.data.get("tier", "trace"))

    @property
    def metadata(self) -> dict[str, Any]:
        if self._zip_metadata is not None:
            return self._zip_metadata
        meta = dict(self.root.data.get("metadata") or {})
        meta["tier"] = self.root.data.get("tier")
        end = self._end()
        if end is not None:
            meta["duration_seconds"] = (end.data.get("duration_ns") or 0) / 1e9
            meta["counts"] = end.data.get("counts")
        meta["total_events"] = len(self.events)
        return meta

    def _end(self) -> Event | None:
        for event in reversed(self.events):
            if event.type == fmt.SESSION_END:
                return event
        return None

    @property
    def duration(self) -> float:
        end = self._end()
        last = end.timestamp_ns if end else max(e.timestamp_ns for e in self.events)
        return (last - self.root.timestamp_ns) / 1e9

    @property
    def complete(self) -> bool:
        """Whether the recording was stopped properly (``False`` for a killed process)."""
        return self._end() is not None

    @cached_property
    def snapshots(self) -> list[dict[str, Any]]:
        """DevDuck-shaped snapshots (:func:`otel_agent_trace.session_format.views.snapshot_view`):
        the same from a session's ``.jsonl`` and from its ``.zip``."""
        if self._zip_snapshots is not None:
            return self._zip_snapshots
        return fmt.build_snapshots(lambda: (e.data for e in self.events))

    def _message_view(self, entry_id: str) -> dict[str, Any]:
        event = self._by_id.get(entry_id)
        return fmt.message_view(None if event is None else event.data, entry_id)

    def get_events_by_layer(self, layer: str) -> list[Event]:
        return [e for e in self.events if e.layer == layer]

    def get_events_by_type(self, event_type: str) -> list[Event]:
        return [e for e in self.events if e.type == event_type or e.event_type == event_type]

    def get_events_until_snapshot(self, snapshot_id: int) -> list[Event]:
        out = []
        for event in self.events:
            if event.type == fmt.SNAPSHOT and event.data.get("snapshot_id") == snapshot_id:
                return out
            out.append(event)
        raise KeyError(f"{self.path}: no snapshot {snapshot_id}")

    # --- the tree ------------------------------------------------------------------------------

    def entry(self, entry_id: str) -> Event:
        return self._by_id[entry_id]

    def children(self, entry_id: str) -> list[Event]:
        return [e for e in self.events if e.parent_id == entry_id]

    @cached_property
    def spans(self) -> list[SpanRecord]:
        """Spans in start order; a span with a start entry and no end entry is unfinished."""
        spans: dict[str, SpanRecord] = {}
        for e in self.events:
            d = e.data
            if e.type == fmt.SPAN_START:
                spans[d["span_id"]] = SpanRecord(
                    span_id=d["span_id"],
                    trace_id=d.get("trace_id", ""),
                    name=d.get("name", ""),
                    layer=e.layer,
                    parent_span_id=d.get("parent_span_id"),
                    start_ns=e.timestamp_ns,
                    kind=d.get("kind"),
                    attributes=dict(d.get("attributes") or {}),
                    entry_id=e.id,
                    parent_entry_id=e.parent_id,
                )
            elif e.type == fmt.SPAN_END:
                rec = spans.get(d.get("span_id", ""))
                if rec is None:  # a span that ended before its start was written: its end says all
                    rec = spans[d["span_id"]] = SpanRecord(
                        span_id=d["span_id"],
                        trace_id=d.get("trace_id", ""),
                        name=d.get("name", ""),
                        layer=e.layer,
                        parent_span_id=d.get("parent_span_id"),
                        start_ns=e.timestamp_ns - int(d.get("duration_ns") or 0),
                        kind=d.get("kind"),
                        entry_id=e.id,
                        parent_entry_id=e.parent_id,
                    )
                rec.end_ns = e.timestamp_ns
                status = d.get("status") or {}
                rec.status = status.get("code", fmt.STATUS_UNSET)
                rec.status_description = status.get("description")
                rec.attributes.update(d.get("attributes") or {})
                rec.content = d.get("content") or {}
            elif e.type == fmt.SPAN_EVENT:
                rec = spans.get(d.get("span_id", ""))
                if rec is not None:
                    rec.events.append(d)
        return list(spans.values())

    def conversation(self, until_entry_id: str | None = None) -> list[dict[str, Any]]:
        """The conversation as of the last model call (or the last one at or before an entry):
        its input messages followed by its output messages."""
        last: Event | None = None
        for e in self.events:
            if e.type == fmt.SPAN_END and "input_message_ids" in (e.data.get("content") or {}):
                last = e
            if until_entry_id is not None and e.id == until_entry_id:
                break
        if last is None:
            return []
        content = last.data["content"]
        ids = list(content.get("input_message_ids") or []) + list(content.get("output_message_ids") or [])
        return [self._message_view(i) for i in ids]

    def to_dict(self) -> dict[str, Any]:
        return {
            "metadata": self.metadata,
            "events": [e.data for e in self.events],
            "snapshots": self.snapshots,
        }

    def __repr__(self) -> str:
        return (
            f"LoadedSession(id={self.session_id}, events={len(self.events)}, "
            f"snapshots={len(self.snapshots)}, duration={self.duration:.1f}s)"
        )


def load_session(path: str | os.PathLike[str], *, strict: bool = False) -> LoadedSession:
    """Load a session JSONL file or session ZIP."""
    return LoadedSession(Path(path).expanduser(), strict=strict)
