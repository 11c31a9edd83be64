"""What every format is read into: :class:`Event` (one entry) and :class:`SpanRecord` (a span put
back together), whatever the file's format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otel_agent_trace import session_format as fmt


@dataclass(slots=True)
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
        if self.type == fmt.SPAN_EVENT:
            name = self.data.get("name")
            return name if isinstance(name, str) else self.type
        return self.type

    @property
    def trace_id(self) -> str | None:
        return self.data.get("trace_id")

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Event:
        return cls(
            id=str(entry.get("id", "")),
            parent_id=str(entry.get("parent_id") or ""),
            type=str(entry.get("type", "")),
            layer=str(entry.get("layer") or ""),
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
    attributes: dict[str, Any] = field(default_factory=dict[str, Any])
    content: dict[str, Any] = field(default_factory=dict[str, Any])
    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    entry_id: str = ""
    parent_entry_id: str = ""

    @property
    def finished(self) -> bool:
        return self.end_ns is not None

    @property
    def duration_ns(self) -> int | None:
        return None if self.end_ns is None else self.end_ns - self.start_ns

    @property
    def duration_s(self) -> float | None:
        return None if self.end_ns is None else (self.end_ns - self.start_ns) / 1e9


@dataclass(frozen=True, slots=True)
class Heading:
    """What ``list`` shows of a file from its first line alone, and how its end is found: the
    last line holding ``end_marker`` within ``end_scan`` bytes of the file's end that the
    format's ``listed_end`` takes for its end."""

    session_id: str | None  # ``None``: the session is named by its file
    start: Any  # its time stamp as the file writes it (ns since the epoch, or ISO-8601)
    end_marker: bytes
    end_scan: int = 64 << 10
    tier: str | None = None
    child: bool | None = None  # ``None``: as the file's name says (``.p<pid>``)
