"""Spans put back together from a session file of ours (JSONL with its child files, or ZIP),
streamed: a span is handed on when its ``span.end`` is read.

Only open spans are held, and few of them whole: past :data:`MAX_WHOLE_OPEN` open at once, a
span is kept as two integers (its key and its start's time and position), so 1 M span starts that
never end take about 130 MB, not a gigabyte. A span whose ``span.end`` is missing (the process
was killed) is *unfinished*: its end is the last time its process was seen (the last entry of its
file) and it carries ``agent_trace.unfinished = true``; the compact ones are read again from the
file, in a second pass, at the end. A compact span that ends takes its name and attributes from
its ``span.end`` alone (the recorder writes them all there; a hand-made start's own extra
attributes are then not merged).
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.checks import BadEntry, otel_ids
from otel_agent_trace.session_format.reader import open_regular

from ..jsonvalue import JSONValue

UNFINISHED_ATTRIBUTE = "agent_trace.unfinished"
MAX_WHOLE_OPEN = 10_000  # open spans kept whole; past this, as two integers each
_POSITION_BITS = 40  # an entry's position among the session's entries, below its start time
_SPAN_TYPES = (fmt.SPAN_START, fmt.SPAN_END, fmt.SPAN_EVENT)


@dataclass
class ExportSpan:
    """One span as it goes to a backend: hex ids, nanosecond times, entry-shaped fields."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int | None = None
    status: dict[str, Any] = field(default_factory=dict[str, Any])
    attributes: dict[str, Any] = field(default_factory=dict[str, Any])
    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    dropped: dict[str, int] = field(default_factory=dict[str, int])
    unfinished: bool = False


@dataclass
class SessionSpans:
    """One session as an export reads it: what a backend's resource needs to know about it, and
    its spans (an iterator: streamed from the file, read once)."""

    path: Path
    session_id: str
    tier: str
    metadata: dict[str, Any]
    spans: Iterator[ExportSpan]
    issues: list[fmt.ReadIssue]
    format: str = "otel-agent-trace"
    unfinished: int = 0  # counted as the spans are read


def session_files(path: Path, issues: list[fmt.ReadIssue] | None = None) -> list[Path]:
    """A JSONL session file followed by its child processes' files; a ZIP alone (it holds them).
    A child name that is not a regular file is left out, noted in ``issues``."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    if zip_like(path):
        return [path]
    first = _first_entry(path)
    if first.get("type") == fmt.SESSION_JOIN:
        return [path]  # a child's own file: exported as given
    session_id = str(first.get("session_id") or "")
    tier = str(first.get("tier") or "trace")
    if not session_id:
        return [path]
    return fmt.child_files(path.parent, session_id, path, tier, issues)


def zip_like(path: Path) -> bool:
    with open_regular(path) as stream:  # a FIFO or a device is refused before it is opened
        return stream.read(4) == b"PK\x03\x04"


def _first_entry(path: Path) -> dict[str, Any]:
    first = next(fmt.iter_entries(path, []), None)
    if first is None:
        raise fmt.SessionFormatError(path, None, "empty session file")
    return first


def _entries(files: list[Path], issues: list[fmt.ReadIssue] | None) -> Iterator[dict[str, Any]]:
    """The entries of the files, checked; a span's ids are hex as OTLP carries them (else the
    error names file and line)."""
    for path in files:
        with fmt.open_events(path) as (stream, name):
            for number, entry in fmt.iter_lines(stream, name, issues=issues, strict=True, check=True):
                if entry.get("type") in _SPAN_TYPES:
                    try:
                        otel_ids(entry)
                    except BadEntry as exc:
                        raise fmt.SessionFormatError(name, number, str(exc)) from None
                yield entry


def _key(entry: dict[str, Any]) -> int | None:
    """A span's trace and span ids as one integer (``None`` for an entry without them)."""
    trace_id, span_id = entry.get("trace_id"), entry.get("span_id")
    if not trace_id or not span_id:
        return None
    return int(trace_id, 16) << 64 | int(span_id, 16)


def _from_entry(entry: dict[str, Any], start: int) -> ExportSpan:
    return ExportSpan(
        trace_id=str(entry["trace_id"]),
        span_id=str(entry["span_id"]),
        parent_span_id=entry.get("parent_span_id") or None,
        name=str(entry.get("name") or ""),
        kind=str(entry.get("kind") or "INTERNAL"),
        start_ns=start,
    )


def _end(span: ExportSpan, entry: dict[str, Any]) -> ExportSpan:
    span.end_ns = entry["ts"]
    span.name = str(entry.get("name") or span.name)
    span.kind = str(entry.get("kind") or span.kind)
    span.parent_span_id = entry.get("parent_span_id") or span.parent_span_id
    attributes: JSONValue = entry.get("attributes")
    if isinstance(attributes, dict):
        span.attributes.update(attributes)
    status: JSONValue = entry.get("status")
    span.status = status if isinstance(status, dict) else {}
    dropped = entry.get("dropped")
    span.dropped = dropped if isinstance(dropped, dict) else {}
    return span


def _cut(span: ExportSpan, end: int) -> ExportSpan:
    span.unfinished = True
    span.end_ns = max(end, span.start_ns)
    span.attributes[UNFINISHED_ATTRIBUTE] = True
    return span


class _Reader:
    """One pass over a session's files, then (only if compact spans were left open) a second."""

    def __init__(self, files: list[Path], session: SessionSpans, max_whole: int) -> None:
        self.files = files
        self.session = session
        self.max_whole = max_whole
        self.whole: dict[int, ExportSpan] = {}  # open spans kept whole
        self.compact: dict[int, int] = {}  # open spans as start time << 40 | position
        self.events: dict[int, list[dict[str, Any]]] = {}  # the events of compact open spans
        self.ended: set[int] = set()  # a span ended twice (a forked child) is sent once
        self.segments: list[int] = []  # position where each file's entries begin
        self.last_seen: list[int] = []  # each file's last time

    def spans(self) -> Iterator[ExportSpan]:
        last_ts = 0
        position = -1
        for position, entry in enumerate(_entries(self.files, self.session.issues)):
            kind = entry.get("type")
            ts = entry.get("ts")
            if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
                if self.segments:  # a new file (a child's) begins: the last one's open spans end here
                    yield from self._close_segment(last_ts)
                self.segments.append(position)
                last_ts = ts if isinstance(ts, int) else 0
                continue
            if not isinstance(ts, int):
                continue
            last_ts = max(last_ts, ts)
            if kind in _SPAN_TYPES:
                done = self._span_entry(kind, entry, ts, position)
                if done is not None:
                    yield done
        if not self.segments:
            self.segments.append(0)
        yield from self._close_segment(last_ts)
        if self.compact:
            yield from self._second_pass(position + 1)

    def _span_entry(self, kind: str, entry: dict[str, Any], ts: int, position: int) -> ExportSpan | None:
        key = _key(entry)
        if key is None:
            return None
        if kind == fmt.SPAN_START:
            if key in self.whole or key in self.compact or key in self.ended:
                return None  # a second start of a span: its first is the span
            if len(self.whole) < self.max_whole:
                span = self.whole[key] = _from_entry(entry, ts)
                attributes: JSONValue = entry.get("attributes")
                if isinstance(attributes, dict):
                    span.attributes.update(attributes)
            else:
                self.compact[key] = ts << _POSITION_BITS | position
            return None
        if kind == fmt.SPAN_EVENT:
            span = self.whole.get(key)
            if span is not None:
                span.events.append(entry)
            elif key in self.compact:
                self.events.setdefault(key, []).append(entry)
            return None
        if key in self.ended:
            return None  # ended twice: the first end
        self.ended.add(key)
        span = self.whole.pop(key, None)
        if span is None:
            packed = self.compact.pop(key, None)
            start = (
                packed >> _POSITION_BITS if packed is not None else ts - int(entry.get("duration_ns") or 0)
            )  # a span whose end came before its start was written: its end says all
            span = _from_entry(entry, start)
            span.events = self.events.pop(key, [])
        return _end(span, entry)

    def _close_segment(self, last_ts: int) -> Iterator[ExportSpan]:
        self.last_seen.append(last_ts)
        for span in self.whole.values():
            self.session.unfinished += 1
            yield _cut(span, last_ts)
        self.whole.clear()

    def _second_pass(self, count: int) -> Iterator[ExportSpan]:
        """The compact spans left open, read again from their start entries."""
        wanted = array("q", sorted(packed & ((1 << _POSITION_BITS) - 1) for packed in self.compact.values()))
        self.compact.clear()
        self.ended.clear()
        at = 0
        for position, entry in enumerate(_entries(self.files, [])):
            if at >= len(wanted) or position >= count:
                break
            if position != wanted[at]:
                continue
            at += 1
            key = _key(entry)
            span = _from_entry(entry, entry["ts"])
            attributes: JSONValue = entry.get("attributes")
            if isinstance(attributes, dict):
                span.attributes.update(attributes)
            span.events = self.events.pop(key, []) if key is not None else []
            segment = bisect_right(self.segments, position) - 1
            self.session.unfinished += 1
            yield _cut(span, self.last_seen[max(segment, 0)])


def read_session_spans(path: str | os.PathLike[str], *, max_whole_open: int = MAX_WHOLE_OPEN) -> SessionSpans:
    """A session of ours, its spans streamed (``spans`` yields each once, finished spans as their
    end is read, then the unfinished ones).

    Bad lines raise :class:`~otel_agent_trace.session_format.SessionFormatError` naming file and
    line (when the spans are read); a torn last line (a crash) is tolerated and listed in
    ``issues``.
    """
    path = Path(path)
    issues: list[fmt.ReadIssue] = []
    files = session_files(path, issues)
    first = _first_entry(path)
    metadata: JSONValue = first.get("metadata")
    session = SessionSpans(
        path=path,
        session_id=str(first.get("session_id") or ""),
        tier=str(first.get("tier") or "trace"),
        metadata=metadata if isinstance(metadata, dict) else {},
        spans=iter(()),
        issues=issues,
    )
    session.spans = _Reader(files, session, max_whole_open).spans()
    return session
