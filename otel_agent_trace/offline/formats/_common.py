"""What several formats answer alike (each format module names these as its own)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import ReadIssue
from otel_agent_trace.session_format.views import MESSAGE_ENTRY_KEYS

from .protocol import Session
from .records import Event


def session_id(root: dict[str, Any], archive: dict[str, Any] | None) -> str | None:
    """The first entry's ``session_id``, else the archive's metadata's."""
    for value in (root.get("session_id"), (archive or {}).get("session_id")):
        if isinstance(value, str) and value:
            return value
    return None


def tier(session: Session) -> str:
    """As the first entry says, else the archive's metadata (``trace`` when neither does)."""
    value = session.root.data.get("tier") or (session.archive_metadata or {}).get("tier") or "trace"
    return str(value)


def no_child_files(path: Path, root: dict[str, Any], issues: list[ReadIssue]) -> list[Path]:
    return []


def not_evicted(session: Session) -> int:
    return 0


def no_evicted_note(session: Session) -> str:
    return ""


def fork_of_ours(session: Session, point: str) -> str:
    """``<session id>.fork-<point>[.checkpoint].jsonl``: a branch written as our entries."""
    tier_part = fmt.CHECKPOINT_SUFFIX if session.tier == "checkpoint" else ""
    return f"{session.session_id}.fork-{point}{tier_part}{fmt.JSONL_SUFFIX}"


def no_own_fork(session: Session, point: str) -> Iterator[bytes]:
    """A branch of a format with no fork of its own is written as our entries, not by it."""
    raise NotImplementedError("a branch of this format is written as our entries")


def stamps_duration(events: list[Event]) -> float:
    """Seconds from the earliest time stamp to the latest (entries with no time left out)."""
    stamps = [e.timestamp_ns for e in events if e.timestamp_ns]
    return (max(stamps) - min(stamps)) / 1e9 if stamps else 0.0


def foreign_metadata(session: Session, name: str) -> dict[str, Any]:
    """Another format's metadata: its id, format and size, and what its ``run_start`` says."""
    meta: dict[str, Any] = {
        "session_id": session.session_id,
        "format": name,
        "total_events": len(session.events),
    }
    start = next((e for e in session.events if e.type == "run_start"), None)
    if start is not None:
        meta.update({k: v for k, v in start.data.items() if k not in MESSAGE_ENTRY_KEYS})
    return meta


_NOT_MESSAGE = frozenset({*MESSAGE_ENTRY_KEYS, "run_id", "trace_id"})


def messages_since(
    session: Session, until: str | None, restart: Callable[[Event], list[dict[str, Any]] | None]
) -> list[dict[str, Any]]:
    """The ``message`` entries (their previews when that is all they hold) since the last entry
    ``restart`` starts the conversation again at (with what it returns)."""
    out: list[dict[str, Any]] = []
    for e in session.events:
        again = restart(e)
        if again is not None:
            out = again
        elif e.type == fmt.MESSAGE:
            message = {k: v for k, v in e.data.items() if k not in _NOT_MESSAGE}
            if "content" not in message and "content_preview" in message:
                message["content"] = message.pop("content_preview")
            out.append(message)
        if until is not None and e.id == until:
            break
    return out
