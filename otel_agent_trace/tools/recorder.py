"""DevDuck's ``session_recorder`` as an agent-callable tool: ``start``, ``snapshot``, ``stop``,
``status``, ``list``.

:func:`session_recorder` is a plain function that never raises: every answer is a dict with
``status`` (``success`` | ``error``), a one-line ``message`` for the model, and the details.
:data:`SESSION_RECORDER_SCHEMA` describes it as a JSON-schema function definition (the shape
OpenAI, Anthropic and MCP tool lists take). The Strands, LangChain and MCP versions wrap it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal import sink
from otel_agent_trace.settings import get_settings

from .paths import UnsafePath, create_exclusive, safe_file

ACTIONS = ("start", "snapshot", "stop", "status", "list")
DESCRIPTION = (
    "Record this agent session (a time-travel debugger): 'start' begins recording; 'snapshot' "
    "marks a point to resume from (give a description); 'stop' ends the recording and exports "
    "the session ZIP (optionally also saved as 'filename' in the sessions directory); 'status' "
    "says what is being recorded; 'list' shows recent sessions."
)
SESSION_RECORDER_SCHEMA: dict[str, Any] = {
    "name": "session_recorder",
    "description": DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
            "description": {"type": "string", "description": "snapshot: what this point is."},
            "name": {"type": "string", "description": "start: a label for the session."},
            "filename": {
                "type": "string",
                "description": "stop: also save the ZIP as this plain file name in the sessions directory.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "list: how many."},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
}


def _directory() -> Path:
    rec = sink.active()
    directory = getattr(rec, "directory", None) if rec is not None else None
    return Path(directory or get_settings().directory).expanduser().absolute()


def _ok(message: str, **data: Any) -> dict[str, Any]:
    return {"status": "success", "message": message, **data}


def _error(message: str, **data: Any) -> dict[str, Any]:
    return {"status": "error", "message": message, **data}


def _start(name: str | None) -> dict[str, Any]:
    rec = sink.active()
    if rec is not None:
        return _error(f"Already recording: {rec.session_id}", session_id=rec.session_id)
    from otel_agent_trace.api import session

    started = session(name).start()
    return _ok(
        f"🎬 Recording started: {started.session_id}",
        session_id=started.session_id,
        files=[str(p) for p in started.files],
    )


def _snapshot(description: str | None) -> dict[str, Any]:
    from otel_agent_trace.api import snapshot

    if sink.active() is None:
        return _error("Not recording: start a session first")
    snapshot_id = snapshot(description or "")
    if snapshot_id is None:
        return _error("The snapshot could not be recorded")
    message = f"🎬 Snapshot #{snapshot_id} created" + (f": {description}" if description else "")
    return _ok(message, snapshot_id=snapshot_id)


def _stop(filename: str | None) -> dict[str, Any]:
    rec = sink.active()
    if rec is None:
        return _error("Not recording")
    target = safe_file(_directory(), filename) if filename else None  # checked before stopping
    if target is not None and (target.exists() or target.is_symlink()):
        return _error(f"Refused: {target.name} already exists in the sessions directory")
    counts = dict(getattr(rec, "counts", {}) or {})
    zips = rec.stop()
    saved = None
    if target is not None and zips:
        fd = create_exclusive(target)
        with os.fdopen(fd, "wb") as out, open(zips[0], "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
        saved = str(target)
    return _ok(
        f"🎬 Recording stopped and exported: {zips[0] if zips else 'no ZIP (a child process session)'}",
        session_id=rec.session_id,
        zip_paths=list(zips),
        saved_as=saved,
        events=counts.get("spans", 0) + counts.get("events", 0) + counts.get("messages", 0),
        snapshots=counts.get("snapshots", 0),
    )


def _status() -> dict[str, Any]:
    rec = sink.active()
    if rec is None:
        return _ok("Not recording", recording=False, directory=str(_directory()))
    return _ok(
        f"Recording {rec.session_id}",
        recording=True,
        session_id=rec.session_id,
        directory=str(_directory()),
        files=[str(p) for p in getattr(rec, "files", [])],
        counts=dict(getattr(rec, "counts", {}) or {}),
    )


def _root(path: Path) -> dict[str, Any]:
    with open(path, "rb") as stream:
        first = stream.readline()
    try:
        return orjson.loads(first)
    except orjson.JSONDecodeError:
        return {}


def recent_sessions(directory: Path, limit: int = 10) -> list[dict[str, Any]]:
    """The newest sessions in ``directory`` (their main trace files), newest first."""
    if not directory.is_dir():
        return []
    # <session>.jsonl; not <session>.checkpoint.jsonl nor a child's <session>.p<pid>.jsonl
    mains = [p for p in directory.glob(f"*{fmt.JSONL_SUFFIX}") if "." not in p.stem]
    mains.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    out = []
    for path in mains[:limit]:
        root = _root(path)
        session_id = root.get("session_id") or path.stem
        zip_path = directory / f"{session_id}{fmt.ZIP_SUFFIX}"
        meta = root.get("metadata") or {}
        out.append(
            {
                "session_id": session_id,
                "name": meta.get("name"),
                "start_time": meta.get("start_time"),
                "file": str(path),
                "zip": str(zip_path) if zip_path.exists() else None,
                "children": len(list(directory.glob(f"{session_id}.p*{fmt.JSONL_SUFFIX}"))),
            }
        )
    return out


def _list(limit: int | None) -> dict[str, Any]:
    limit = max(1, min(int(limit or 10), 100))
    directory = _directory()
    sessions = recent_sessions(directory, limit)
    return _ok(f"{len(sessions)} recent session(s) in {directory}", sessions=sessions)


def session_recorder(
    action: str,
    description: str | None = None,
    name: str | None = None,
    filename: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Record this agent session: start, snapshot (with a description), stop (exports the ZIP and
    says where it is), status, list (recent sessions).

    Args:
        action: One of start, snapshot, stop, status, list.
        description: snapshot: what this point in the session is.
        name: start: a label for the session.
        filename: stop: also save the ZIP under this plain file name in the sessions directory.
        limit: list: how many sessions (default 10).
    """
    try:
        if action == "start":
            return _start(name)
        if action == "snapshot":
            return _snapshot(description)
        if action == "stop":
            return _stop(filename)
        if action == "status":
            return _status()
        if action == "list":
            return _list(limit)
        return _error(f"Unknown action {action!r}: expected one of {', '.join(ACTIONS)}")
    except UnsafePath as exc:
        return _error(f"Refused: {exc}")
    except Exception as exc:  # the agent gets an answer, never our exception
        return _error(f"session_recorder {action} failed: {type(exc).__name__}: {exc}")
