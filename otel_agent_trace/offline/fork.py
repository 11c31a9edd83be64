"""Fork a recorded session at an entry: a new session file holding the entries up to and including
the fork point, then one ``fork`` entry whose parent is the fork point.

The output is created exclusively (``O_EXCL``): an existing file is never overwritten. A fork of a
checkpoint-tier session stays private (``0600``, named ``.checkpoint.jsonl``).

A DM-Code-Agent file is forked as DM forks it (``dm-agent-trace fork``): its own lines up to the
point, each as DM loads it (a pre-2.0 line with its ``legacy-NNNN`` id and parent), then a DM
``fork`` entry ``{source, forked_from_entry_id, entry_count}`` under the point, in
``<source stem>.fork-<point>.jsonl``. It is resumable when a ``checkpoint`` at or before the point
holds the conversation, as ``dm-agent --resume`` needs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from otel_agent_trace import session_format as fmt

from .replay.timeline import resolve_id
from .resume.conversation import plain
from .resume.errors import ResumeError
from .resume.history import resumable_context, valid_history
from .resume.snapshots import held_snapshot

if TYPE_CHECKING:
    from .loader import LoadedSession

PRIVATE_MODE = 0o600
SHARED_MODE = 0o644


@dataclass
class ForkResult:
    """The new file, where it branched, and whether (and how) it can be resumed."""

    path: Path
    source_session: str
    fork_point: str
    entries_copied: int
    tier: str
    resumable: bool
    snapshot_id: int | None  # the latest snapshot at or before the fork point
    reason: str
    messages: int = 0  # how many messages resume restores at the fork point
    cut: str | None = None  # why resume leaves the last ones out (a tool call with no result yet)

    def resume_command(self) -> str | None:
        if not self.resumable:
            return None
        return (
            f"otel-agent-trace resume {self.path} --at {self.fork_point} "
            '--agent your_module:make_agent "your next question"'
        )


def default_output(session: LoadedSession, fork_point: str) -> Path:
    """Beside the source, named as its format names a branch: ours
    ``<source session>.fork-<fork point>[.checkpoint].jsonl``, DM's
    ``<source stem>.fork-<fork point>.jsonl``."""
    return session.path.with_name(session.format.fork_name(session, fork_point))


def resumable_at(session: LoadedSession, fork_point: str) -> tuple[bool, int | None, str]:
    """Whether a branch at ``fork_point`` can be resumed, and why: the checkpoint tier (the trace
    tier keeps no message text) and a conversation at that entry that every framework takes — the
    tool results recorded by then included, cut back to the last complete turn where a tool call
    has no result yet (:func:`otel_agent_trace.offline.resume.resumable_context`)."""
    return _resumable(session, fork_point)[:3]


def _resumable(session: LoadedSession, fork_point: str) -> tuple[bool, int | None, str, int, str | None]:
    snapshot_id = None
    for event in session.events:
        if event.type == fmt.SNAPSHOT:
            snapshot_id = event.data.get("snapshot_id")
        if event.id == fork_point:
            break
    if session.format.SNAPSHOTS_HOLD_CONVERSATION and session.format.FORKS_IN_OWN_LINES:
        return _snapshot_resumable(session, fork_point)
    if session.format.SNAPSHOTS_HOLD_CONVERSATION:
        why = (
            f"a {session.format.NAME} file keeps its conversation in its snapshots, which a fork does not "
            f"carry: resume the source itself (otel-agent-trace resume {session.path} --snapshot N)"
        )
        return False, None, why, 0, None
    try:
        context = resumable_context(session, fork_point)
    except ResumeError:
        return (
            False,
            snapshot_id,
            (
                f"the source is {session.tier}-tier: it keeps message text only as hashes; "
                "record with AGENT_TRACE_TIER=checkpoint (or both) to resume"
            ),
            0,
            None,
        )
    count = len(context.messages)
    if not any(m.get("role") != "system" for m in context.messages):
        why = "no conversation at or before the fork point"
        return False, snapshot_id, why + (f" ({context.cut})" if context.cut else ""), 0, context.cut
    reason = f"the conversation at the fork point, {count} messages"
    if context.cut:
        reason += f"; {context.cut}"
    return True, snapshot_id, reason, count, context.cut


def _snapshot_resumable(
    session: LoadedSession, fork_point: str
) -> tuple[bool, int | None, str, int, str | None]:
    """A branch in the format's own lines carries its snapshots: resumable when one at or before
    the point (the latest) holds a conversation, as DM's ``--resume-at`` takes a ``checkpoint``."""
    name = session.format.SNAPSHOT_NAME
    try:
        snapshot, entry_id = held_snapshot(session, None, fork_point)
    except ResumeError:
        why = (
            f"no {name} entry at or before the fork point: this branch can be inspected but not "
            f"resumed ({session.format.RECORD_RESUMABLE} to make forks resumable)"
        )
        return False, None, why, 0, None
    context = valid_history([plain(m) for m in snapshot["agent_messages"]], entry_id)
    count = len(context.messages)
    if not any(m.get("role") != "system" for m in context.messages):
        return False, snapshot["snapshot_id"], f"the {name} {entry_id} holds no conversation", 0, None
    reason = f"the {name} {entry_id} ({snapshot['description']}), {count} messages"
    if context.cut:
        reason += f"; {context.cut}"
    return True, snapshot["snapshot_id"], reason, count, context.cut


def _write_new(path: Path, mode: int, chunks: Iterator[bytes]) -> None:
    """``chunks`` into a file that did not exist (``O_EXCL``), with ``mode`` whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _fork_own(session: LoadedSession, point: str, path: Path, lines: Iterator[bytes]) -> ForkResult:
    """The branch in the format's own lines (``lines``: the entries, then the fork entry)."""
    mode = PRIVATE_MODE if session.tier == "checkpoint" else SHARED_MODE
    written = 0

    def counted() -> Iterator[bytes]:
        nonlocal written
        for line in lines:
            written += 1
            yield line

    _write_new(path, mode, counted())
    ok, snapshot_id, reason, count, cut = _snapshot_resumable(session, point)
    copied = written - 1  # (the fork entry is no copy)
    return ForkResult(
        path, session.session_id, point, copied, session.tier, ok, snapshot_id, reason, count, cut
    )


def fork_session(session: LoadedSession, at: str, output: str | os.PathLike[str] | None = None) -> ForkResult:
    """Write the branch; ``at`` is an entry id or a unique prefix (``EntryNotFound`` otherwise).
    Raises ``FileExistsError`` rather than overwrite ``output``."""
    ids = [e.id for e in session.events]
    point = resolve_id(ids, at)
    path = Path(output) if output is not None else default_output(session, point)
    if session.format.FORKS_IN_OWN_LINES:
        return _fork_own(session, point, path, session.format.fork_lines(session, point))
    copied: list[bytes] = []
    last_ts = 0
    for event in session.events:
        copied.append(fmt.dumps(event.data))
        last_ts = max(last_ts, event.timestamp_ns)
        if event.id == point:
            break
    fork_entry = {
        "id": fmt.entry_id(fmt.entry_prefix(session.session_id, f"fork:{point}"), 0),
        "parent_id": point,
        "type": fmt.FORK,
        "layer": fmt.LAYER_AGENT,
        "ts": max(time.time_ns(), last_ts),
        "source_session": session.session_id,
        "source_path": str(session.path),
        "forked_from_entry_id": point,
        "tier": session.tier,
    }
    mode = PRIVATE_MODE if session.tier == "checkpoint" else SHARED_MODE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # whatever the umask
        data = b"".join(copied) + fmt.dumps(fork_entry)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    ok, snapshot_id, reason, count, cut = _resumable(session, point)
    return ForkResult(
        path, session.session_id, point, len(copied), session.tier, ok, snapshot_id, reason, count, cut
    )
