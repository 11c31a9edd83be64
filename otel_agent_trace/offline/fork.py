"""Fork a recorded session at an entry: a new session file holding the entries up to and including
the fork point, then one ``fork`` entry whose parent is the fork point.

The output is created exclusively (``O_EXCL``): an existing file is never overwritten. A fork of a
checkpoint-tier session stays private (``0600``, named ``.checkpoint.jsonl``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt

from .replay.timeline import resolve_id
from .resume import ResumeError, _is_native, resumable_context

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


def default_output(session: Any, fork_point: str) -> Path:
    """``<source dir>/<source session>.fork-<fork point>[.checkpoint].jsonl``."""
    tier_part = fmt.CHECKPOINT_SUFFIX if session.tier == "checkpoint" else ""
    return session.path.parent / f"{session.session_id}.fork-{fork_point}{tier_part}{fmt.JSONL_SUFFIX}"


def resumable_at(session: Any, fork_point: str) -> tuple[bool, int | None, str]:
    """Whether a branch at ``fork_point`` can be resumed, and why: the checkpoint tier (the trace
    tier keeps no message text) and a conversation at that entry that every framework takes — the
    tool results recorded by then included, cut back to the last complete turn where a tool call
    has no result yet (:func:`otel_agent_trace.offline.resume.resumable_context`)."""
    return _resumable(session, fork_point)[:3]


def _resumable(session: Any, fork_point: str) -> tuple[bool, int | None, str, int, str | None]:
    snapshot_id = None
    for event in session.events:
        if event.type == fmt.SNAPSHOT:
            snapshot_id = event.data.get("snapshot_id")
        if event.id == fork_point:
            break
    if not _is_native(session):
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


def fork_session(session: Any, at: str, output: str | os.PathLike[str] | None = None) -> ForkResult:
    """Write the branch; ``at`` is an entry id or a unique prefix (``EntryNotFound`` otherwise).
    Raises ``FileExistsError`` rather than overwrite ``output``."""
    ids = [e.id for e in session.events]
    point = resolve_id(ids, at)
    path = Path(output) if output is not None else default_output(session, point)
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
