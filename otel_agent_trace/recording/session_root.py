"""The root entry of each of a session's files (``session.start``; ``session.join`` in a child
process: the facts of the run), and a child process's file tag."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Protocol

from otel_agent_trace import session_format as fmt
from otel_agent_trace.settings import Settings

from .environment import Environment
from .span_entries import SESSION_KEYS
from .tiers import TierPolicy


class StartedSession(Protocol):
    """What the root entry says of a session (a ``SessionRecorder``, starting)."""

    session_id: str
    name: str | None
    user_metadata: dict[str, Any]
    started_ns: int
    env: Environment
    settings: Settings
    is_child: bool


def root_entry(session: StartedSession, tier: str, policy: TierPolicy) -> dict[str, Any]:
    """The root entry (``session.start``; ``session.join`` in a child process) of one file."""
    env = session.env
    host = env.host()
    meta = {
        "session_id": session.session_id,
        "name": session.name,
        "format": fmt.FORMAT_NAME,
        "format_version": fmt.FORMAT_VERSION,
        "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z", env.localtime(session.started_ns / 1e9)),
        "hostname": host["hostname"],
        "platform": host["platform"],
        "python_version": host["python_version"],
        "pid": env.pid(),
        "argv": env.argv(),
        "cwd": working_directory(env),
        "packages": host["packages"],
    }
    if session.user_metadata:
        meta["user"] = session.user_metadata
    if session.settings.replay_of:  # a model replay's run: the session it was answered from
        meta["replay_of"] = session.settings.replay_of
    kind = fmt.SESSION_START
    if session.is_child:
        kind = fmt.SESSION_JOIN
        meta["parent_span_id"] = session.settings.inherited_parent_span
        meta["ppid"] = env.ppid()
    return {
        "type": kind,
        "layer": fmt.LAYER_AGENT,
        "ts": session.started_ns,
        "session_id": session.session_id,
        "tier": tier,
        "metadata": policy.value(meta),
        "span_attributes": dict.fromkeys(SESSION_KEYS, session.session_id),
    }


def working_directory(env: Environment) -> str | None:
    """The process's working directory, ``None`` when it was removed (``getcwd`` raises): the
    session is recorded all the same (a snapshot says the same, :mod:`.snapshots`)."""
    try:
        return env.cwd()
    except OSError:
        return None


def free_child_tag(directory: Path, session_id: str, tag: str | None, settings: Settings) -> str | None:
    """``tag`` (``p<pid>``), or ``p<pid>-<n>`` when a process of that pid already wrote a child file
    of this session (a forked child that recorded, then exec'd a Python run under the plug-in)."""
    if not tag:
        return tag
    for n in range(1000):
        candidate = tag if n == 0 else f"{tag}-{n}"
        names = [fmt.session_file_name(session_id, tier, candidate) for tier in settings.tiers]
        if not any(os.path.lexists(directory / name) for name in names):
            return candidate
    return tag
