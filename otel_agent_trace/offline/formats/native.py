"""Our own format (``otel-agent-trace/session``): entries are checked, not changed, so a field
with a wrong type is an error naming file and line here rather than a traceback later. The checks
are the format's own (:mod:`otel_agent_trace.session_format.checks`), as every reader applies them.

A session's JSONL named by its session id is followed by its child processes' files
(:func:`child_files`), as its ZIP orders them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.checks import check_entry, check_version
from otel_agent_trace.session_format.reader import ReadIssue, Source
from otel_agent_trace.session_format.reader import child_files as _child_files

from ..jsonvalue import JSONValue
from . import _common
from .protocol import Session
from .records import Event, Heading, SpanRecord

NAME = "otel-agent-trace"
END_TYPES = frozenset({fmt.SESSION_END})
SNAPSHOT_TYPES = frozenset({fmt.SNAPSHOT})
SNAPSHOT_NAME = "snapshot"
SNAPSHOTS_HOLD_CONVERSATION = False  # messages by id: rebuilt at any entry (offline/resume)
FORKS_IN_OWN_LINES = False
RECORD_RESUMABLE = "record with AGENT_TRACE_TIER=checkpoint (or both)"

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")

session_id = _common.session_id
tier = _common.tier
evicted = _common.not_evicted
evicted_note = _common.no_evicted_note
fork_name = _common.fork_of_ours
fork_lines = _common.no_own_fork


def matches(raw: dict[str, Any]) -> bool:
    return "type" in raw and "id" in raw


class Normalizer:
    """Checks one file's entries (they are returned as they are)."""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        return check_entry(raw)


def normalizer(source: Source | None) -> Normalizer:
    return Normalizer()


def child_files(path: Path, root: dict[str, Any], issues: list[ReadIssue]) -> list[Path]:
    """The child processes' files of the JSONL ``path`` named by its session id (none for a file
    named otherwise: children are found only beside the file named by the session)."""
    if root.get("type") != fmt.SESSION_START:
        return []
    sid, file_tier = root.get("session_id"), root.get("tier") or "trace"
    if not isinstance(sid, str) or not _SESSION_ID.match(sid):
        return []
    if path.name != fmt.session_file_name(sid, file_tier):
        return []
    return _child_files(path.parent, sid, path, file_tier, issues)[1:]


def metadata(session: Session) -> dict[str, Any]:
    """The root's metadata, with the tier, the end's duration and counts, and the size."""
    root = session.root.data
    root_meta: JSONValue = root.get("metadata")
    meta: dict[str, Any] = dict(root_meta) if isinstance(root_meta, dict) else {}
    meta["tier"] = root.get("tier")
    end = session.end_event
    if end is not None:
        meta["duration_seconds"] = (end.data.get("duration_ns") or 0) / 1e9
        meta["counts"] = end.data.get("counts")
    meta["total_events"] = len(session.events)
    return meta


def duration(session: Session) -> float | None:
    """Seconds from the first entry to the session's end (else from the first time to the last)."""
    end = session.end_event
    if end is not None:
        return (end.timestamp_ns - session.root.timestamp_ns) / 1e9
    return _common.stamps_duration(session.events)


def spans(events: list[Event]) -> list[SpanRecord]:
    """The spans of ``span.start`` / ``span.end`` / ``span.event`` entries, in start order."""
    out: dict[str, SpanRecord] = {}
    for e in events:
        d = e.data
        if e.type == fmt.SPAN_START:
            out[d["span_id"]] = SpanRecord(
                span_id=d["span_id"],
                trace_id=d.get("trace_id") or "",
                name=d.get("name") or "",
                layer=e.layer,
                parent_span_id=d.get("parent_span_id"),
                start_ns=e.timestamp_ns,
                kind=d.get("kind"),
                attributes=dict(d.get("attributes") or {}),
                entry_id=e.id,
                parent_entry_id=e.parent_id,
            )
        elif e.type == fmt.SPAN_END:
            rec = out.get(d["span_id"])
            if rec is not None and rec.finished:
                continue  # ended twice (a forked child ending a span it inherited): the first end
            if rec is None:  # a span that ended before its start was written: its end says all
                rec = out[d["span_id"]] = SpanRecord(
                    span_id=d["span_id"],
                    trace_id=d.get("trace_id") or "",
                    name=d.get("name") or "",
                    layer=e.layer,
                    parent_span_id=d.get("parent_span_id"),
                    start_ns=e.timestamp_ns - int(d.get("duration_ns") or 0),
                    kind=d.get("kind"),
                    entry_id=e.id,
                    parent_entry_id=e.parent_id,
                )
            rec.end_ns = e.timestamp_ns
            status: dict[str, Any] = d.get("status") or {}  # an object: the entry is checked
            rec.status = status.get("code") or fmt.STATUS_UNSET
            rec.status_description = status.get("description")
            rec.attributes.update(d.get("attributes") or {})
            rec.content = d.get("content") or {}
        elif e.type == fmt.SPAN_EVENT:
            rec = out.get(d["span_id"])
            if rec is not None:
                rec.events.append(d)
    return list(out.values())


def snapshots(events: list[Event]) -> list[dict[str, Any]]:
    return fmt.build_snapshots(lambda: (e.data for e in events))


def conversation(session: Session, until: str | None) -> list[dict[str, Any]]:
    """The last model call's (at or before entry ``until``) input messages, then its output."""
    last: Event | None = None
    for e in session.events:
        if e.type == fmt.SPAN_END and "input_message_ids" in (e.data.get("content") or {}):
            last = e
        if until is not None and e.id == until:
            break
    if last is None:
        return []
    content = last.data["content"]
    ids = list(content.get("input_message_ids") or []) + list(content.get("output_message_ids") or [])
    return [message_view(session, i) for i in ids]


def message_view(session: Session, entry_id: str) -> dict[str, Any]:
    """The message of entry ``entry_id`` (a placeholder naming it when there is none)."""
    try:
        data: dict[str, Any] | None = session.entry(entry_id).data
    except KeyError:
        data = None
    return fmt.message_view(data, entry_id)


def unresumable(session: Session) -> str | None:
    """A trace-tier recording keeps message text only as hashes: nothing to resume."""
    if session.tier == "checkpoint":
        return None
    return (
        f"a {session.tier}-tier recording keeps message text only as hashes; "
        "resume needs the checkpoint tier (record with AGENT_TRACE_TIER=checkpoint or both)"
    )


def heading(first: dict[str, Any], file_base: str) -> Heading | None:
    """A file that starts with its session's start (or a child's join)."""
    if first.get("type") not in (fmt.SESSION_START, fmt.SESSION_JOIN):
        return None
    sid = first.get("session_id")
    return Heading(
        sid if isinstance(sid, str) else None,
        first.get("ts"),
        b'"session.end"',
        tier=first.get("tier"),
        child=first.get("type") == fmt.SESSION_JOIN,
    )


def listed_end(entry: dict[str, Any]) -> tuple[float | None, str] | None:
    if entry.get("type") != fmt.SESSION_END:
        return None
    took = entry.get("duration_ns")
    return (took / 1e9 if isinstance(took, (int, float)) else None), ""


def matches_archive(metadata: dict[str, Any]) -> bool:
    return metadata.get("format") == fmt.FORMAT_NAME


def as_ours(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return iter(entries)


__all__ = [
    "END_TYPES",
    "FORKS_IN_OWN_LINES",
    "NAME",
    "RECORD_RESUMABLE",
    "SNAPSHOTS_HOLD_CONVERSATION",
    "SNAPSHOT_NAME",
    "SNAPSHOT_TYPES",
    "Normalizer",
    "check_version",
    "child_files",
    "conversation",
    "duration",
    "fork_lines",
    "fork_name",
    "heading",
    "listed_end",
    "matches",
    "matches_archive",
    "metadata",
    "normalizer",
    "snapshots",
    "spans",
    "unresumable",
]
