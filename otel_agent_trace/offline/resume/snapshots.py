"""Finding a snapshot: by number, or the latest at or before an entry; in a session of ours (a
snapshot entry naming its messages) or of a format whose snapshots hold the messages whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from otel_agent_trace import session_format as fmt

from ..formats.records import Event
from ..replay.timeline import resolve_id
from .conversation import plain
from .errors import ResumeError
from .history import check_resumable

if TYPE_CHECKING:
    from .session import Session


def _snapshot_entries(session: Session) -> list[Event]:
    return [e for e in session.events if e.type == fmt.SNAPSHOT]


def find_snapshot(session: Session, n: int | None = None, *, at: str | None = None) -> Event:
    """The snapshot entry numbered ``n`` (1-based; ``None``: the latest; negative: from the end), or
    the latest one at or before entry ``at``."""
    snaps = _snapshot_entries(session)
    if not snaps:
        raise ResumeError(f"{session.path}: no snapshots: nothing to resume from")
    if at is not None:
        point = resolve_id([e.id for e in session.events], at)
        best = None
        for event in session.events:
            if event.type == fmt.SNAPSHOT:
                best = event
            if event.id == point:
                break
        if best is None:
            raise ResumeError(f"{session.path}: no snapshot at or before {point}")
        return best
    if n is None:
        return snaps[-1]
    if n < 0:
        if -n > len(snaps):
            raise ResumeError(f"{session.path}: only {len(snaps)} snapshots")
        return snaps[n]
    for event in snaps:
        if event.data.get("snapshot_id") == n:
            return event
    have = ", ".join(str(e.data.get("snapshot_id")) for e in snaps)
    raise ResumeError(f"{session.path}: no snapshot {n} (snapshots: {have})")


def snapshot_messages(session: Session, snapshot: Event) -> list[dict[str, Any]]:
    """A snapshot's conversation; a :class:`ResumeError` when the file does not hold its text."""
    check_resumable(session)
    by_id = {e.id: e for e in session.events}
    out: list[dict[str, Any]] = []
    message_ids: list[str] = snapshot.data.get("message_ids") or []
    for mid in message_ids:
        event = by_id.get(mid)
        if event is None:
            raise ResumeError(f"{session.path}: message {mid} of snapshot {snapshot.id} is not in the file")
        out.append(plain(fmt.message_view(event.data, mid)))
    return out


def held_snapshot(session: Session, n: int | None, at: str | None) -> tuple[dict[str, Any], str]:
    """A snapshot of a format whose snapshots hold the conversation whole (a DevDuck ZIP's
    ``snapshots.json``, a DM-Code-Agent ``checkpoint``), as ``session.snapshots`` shows it, and
    the id of the entry that took it (``""`` if none): numbered ``n`` (as :func:`find_snapshot`),
    or the latest at or before entry ``at``."""
    snaps = session.snapshots
    if not snaps:
        raise ResumeError(f"{session.path}: no snapshots: nothing to resume from")
    taken: dict[Any, str] = {}  # snapshot id -> the entry that took it
    best = None
    point = resolve_id([e.id for e in session.events], at) if at is not None else None
    for event in session.events:
        if event.type in session.format.SNAPSHOT_TYPES:
            own = event.data.get("snapshot_id")
            taken.setdefault(own if isinstance(own, int) else len(taken) + 1, event.id)
            best = own if isinstance(own, int) else len(taken)
        if event.id == point:
            break
    if point is not None:
        if best is None:
            raise ResumeError(f"{session.path}: no snapshot at or before {point}")
        n = best
    if n is None:
        snap = snaps[-1]
    elif n < 0:
        if -n > len(snaps):
            raise ResumeError(f"{session.path}: only {len(snaps)} snapshots")
        snap = snaps[n]
    else:
        found = [s for s in snaps if s.get("snapshot_id") == n]
        if not found:
            have = ", ".join(str(s.get("snapshot_id")) for s in snaps)
            raise ResumeError(f"{session.path}: no snapshot {n} (snapshots: {have})")
        snap = found[0]
    if not isinstance(snap.get("agent_messages"), list):
        raise ResumeError(f"{session.path}: snapshot {snap.get('snapshot_id')} holds no messages")
    return snap, taken.get(snap.get("snapshot_id"), "")


def latest_snapshot_at(session: Session, entry_id: str) -> Event | None:
    best = None
    for event in session.events:
        if event.type == fmt.SNAPSHOT:
            best = event
        if event.id == entry_id:
            break
    return best
