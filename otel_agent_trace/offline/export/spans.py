"""Spans put back together from a session file (JSONL or ZIP, child files included), streaming.

Only spans are kept in memory (no messages, no snapshots). A span whose ``span.end`` is missing
(the process was killed) is kept as *unfinished*: its end is the last time its process was seen
(the last entry of its file), and it carries ``agent_trace.unfinished = true``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.checks import BadEntry, otel_ids
from otel_agent_trace.session_format.reader import open_regular

UNFINISHED_ATTRIBUTE = "agent_trace.unfinished"


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
    status: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    unfinished: bool = False


@dataclass
class SessionSpans:
    """The spans of one session and what a backend's resource needs to know about it."""

    path: Path
    session_id: str
    tier: str
    metadata: dict[str, Any]
    spans: list[ExportSpan]
    issues: list[fmt.ReadIssue]


def session_files(path: Path, issues: list[fmt.ReadIssue] | None = None) -> list[Path]:
    """A JSONL session file followed by its child processes' files; a ZIP alone (it holds them).
    A child name that is not a regular file is left out, noted in ``issues``."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    if zip_like(path):
        return [path]
    first = next(fmt.iter_entries(path, []), None)
    if first is None:
        raise fmt.SessionFormatError(path, None, "empty session file")
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


def _entries(files: list[Path], issues: list[fmt.ReadIssue]) -> Iterator[dict[str, Any]]:
    """The entries of the files, checked; a span's ids are hex as OTLP carries them (else the
    error names file and line)."""
    spans = (fmt.SPAN_START, fmt.SPAN_END, fmt.SPAN_EVENT)
    for path in files:
        with fmt.open_events(path) as (stream, name):
            for number, entry in fmt.iter_lines(stream, name, issues=issues, strict=True, check=True):
                if entry.get("type") in spans:
                    try:
                        otel_ids(entry)
                    except BadEntry as exc:
                        raise fmt.SessionFormatError(name, number, str(exc)) from None
                yield entry


def read_session_spans(path: str | os.PathLike[str]) -> SessionSpans:
    """Every span of a session, in the order their first entry appears.

    Bad lines raise :class:`~otel_agent_trace.session_format.SessionFormatError` naming file and
    line; a torn last line (a crash) is tolerated and listed in ``issues``.
    """
    path = Path(path)
    issues: list[fmt.ReadIssue] = []
    spans: dict[tuple[str, str], ExportSpan] = {}
    open_in_segment: list[ExportSpan] = []
    session_id, tier, metadata = "", "trace", {}
    last_ts = 0

    def close_segment() -> None:
        for span in open_in_segment:
            if span.end_ns is None:
                span.unfinished = True
                span.end_ns = max(last_ts, span.start_ns)
        open_in_segment.clear()

    for entry in _entries(session_files(path, issues), issues):
        kind = entry.get("type")
        ts = entry.get("ts")
        if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
            close_segment()  # a new file (a child's) begins: the last one's open spans are cut here
            if kind == fmt.SESSION_START or not session_id:
                session_id = str(entry.get("session_id") or session_id)
                tier = str(entry.get("tier") or tier)
                metadata = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
            last_ts = ts if isinstance(ts, int) else 0
            continue
        if isinstance(ts, int) and ts > last_ts:
            last_ts = ts
        if kind not in (fmt.SPAN_START, fmt.SPAN_END, fmt.SPAN_EVENT):
            continue
        key = (str(entry.get("trace_id") or ""), str(entry.get("span_id") or ""))
        if not key[0] or not key[1] or not isinstance(ts, int):
            continue
        span = spans.get(key)
        if kind == fmt.SPAN_EVENT:
            if span is not None:
                span.events.append(entry)
            continue
        if span is None:
            start = ts if kind == fmt.SPAN_START else ts - int(entry.get("duration_ns") or 0)
            span = spans[key] = ExportSpan(
                trace_id=key[0],
                span_id=key[1],
                parent_span_id=entry.get("parent_span_id") or None,
                name=str(entry.get("name") or ""),
                kind=str(entry.get("kind") or "INTERNAL"),
                start_ns=start,
            )
            open_in_segment.append(span)
        attributes = entry.get("attributes")
        if isinstance(attributes, dict):
            span.attributes.update(attributes)
        if kind == fmt.SPAN_END:
            span.end_ns = ts
            span.name = str(entry.get("name") or span.name)
            span.kind = str(entry.get("kind") or span.kind)
            span.parent_span_id = entry.get("parent_span_id") or span.parent_span_id
            status = entry.get("status")
            span.status = status if isinstance(status, dict) else {}
            dropped = entry.get("dropped")
            span.dropped = dropped if isinstance(dropped, dict) else {}
    close_segment()
    for span in spans.values():
        if span.unfinished:
            span.attributes[UNFINISHED_ATTRIBUTE] = True
    return SessionSpans(path, session_id, tier, metadata, list(spans.values()), issues)
