"""Sessions of the other formats the loader reads (DevDuck's session ZIP, DM-Code-Agent's JSONL)
as export spans: the spans the loader builds (``LoadedSession.spans``), which ``analyze`` and
``view`` show, with ids OTLP carries.

Their own ids are not OTLP's (DevDuck's events have none, DM's are ``<run>-0005``): an id that is
not 32 (trace) or 16 (span) hex digits is replaced by the first digits of the SHA-256 of the
session id and it, the same on every export of the file, and kept as
``agent_trace.source.trace_id`` / ``agent_trace.source.span_id``. A span without a trace id goes in
the session's own trace. An entry without a time (DM's ``"t0"``) gets one estimated from file
order (:mod:`.times`), and its span says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import LoadedSession, SpanRecord

from .spans import UNFINISHED_ATTRIBUTE, ExportSpan, SessionSpans
from .times import ESTIMATED_ATTRIBUTE, STEP_NS, spans_with_times

_HEX = re.compile(r"[0-9a-f]+")


def otel_id(session_id: str, value: str, digits: int) -> str:
    """``value`` when it is an OTLP id of ``digits`` hex digits, else one made from it (stable)."""
    lowered = value.lower()
    if len(lowered) == digits and _HEX.fullmatch(lowered) and lowered != "0" * digits:
        return lowered
    return hashlib.sha256(f"{session_id}\x00{value}".encode()).hexdigest()[:digits]


def _status(record: SpanRecord) -> dict[str, Any]:
    if record.status in (fmt.STATUS_OK, fmt.STATUS_ERROR):
        out: dict[str, Any] = {"code": record.status}
        if record.status == fmt.STATUS_ERROR and record.status_description:
            out["description"] = record.status_description
        return out
    return {}


def _spans(session: LoadedSession, records: list[SpanRecord], last_seen: int) -> Iterator[ExportSpan]:
    session_id = session.session_id
    by_id = {r.span_id: r for r in records}
    for record in records:
        source_trace = record.trace_id or session_id
        trace_id = otel_id(session_id, source_trace, 32)
        span_id = otel_id(session_id, record.span_id, 16)
        parent = by_id.get(record.parent_span_id or "")
        attributes: dict[str, Any] = dict(record.attributes)
        attributes["agent_trace.layer"] = record.layer
        attributes["agent_trace.entry.id"] = record.entry_id
        if trace_id != source_trace.lower():
            attributes["agent_trace.source.trace_id"] = source_trace
        if span_id != record.span_id.lower():
            attributes["agent_trace.source.span_id"] = record.span_id
        span = ExportSpan(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=None if parent is None else otel_id(session_id, parent.span_id, 16),
            name=record.name,
            kind=record.kind or "INTERNAL",
            start_ns=record.start_ns,
            end_ns=record.end_ns,
            status=_status(record),
            attributes=attributes,
            events=list(record.events),
        )
        if span.end_ns is None:
            span.unfinished = True
            span.end_ns = max(last_seen, span.start_ns)
            span.attributes[UNFINISHED_ATTRIBUTE] = True
        yield span


def read_foreign_spans(path: Path, session: LoadedSession) -> SessionSpans:
    """The spans of a loaded DevDuck or DM session (small files: read whole, as the loader does)."""
    records, estimated, last_seen = spans_with_times(session, path)
    spans = list(_spans(session, records, last_seen))
    issues = list(session.issues)
    if estimated:
        issues.append(
            fmt.ReadIssue(
                str(path),
                None,
                f"{estimated} of {len(session.events)} entries have no ISO-8601 timestamp: their times "
                f"are estimated from file order ({STEP_NS // 1_000_000} ms apart, from the nearest "
                "known time, else from the file's modification time); their spans carry "
                f"{ESTIMATED_ATTRIBUTE}",
            )
        )
    return SessionSpans(
        path=path,
        session_id=session.session_id,
        tier=session.tier,
        metadata=session.metadata,
        spans=iter(spans),
        issues=issues,
        format=session.format.NAME,
        unfinished=sum(s.unfinished for s in spans),
    )


__all__ = ["otel_id", "read_foreign_spans"]
