"""The session ZIP: written at stop, atomically, never over another file.

Members: ``events.jsonl`` (the session tree, the parent's file then its child processes'),
``snapshots.json`` (DevDuck's shape), ``metadata.json`` and ``resume.json`` (the latest snapshot's
state as JSON; no pickle is ever written).
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io

if TYPE_CHECKING:
    from .recorder import SessionRecorder
    from .writer import TierWriter

# ``fmt`` loads its modules on first use; an export's are loaded with this module (at session
# start: lifecycle.start_session), not at exit, where defining their dataclasses would make an
# interrupted CPython exit with status 1 instead of dying of SIGINT.
_USES = (fmt.child_files, fmt.iter_files, fmt.build_snapshots)

_unfinished: set[Path] = set()  # temporary files being written (see discard_unfinished)


def discard_unfinished() -> None:
    """Remove the temporary files of exports under way (the process is about to be killed by
    ``lifecycle``'s watchdog: only SIGKILL mid-write can leave one behind)."""
    for tmp in list(_unfinished):
        try:
            os.unlink(tmp)
        except OSError:
            pass


TIER_NOTES = {
    "trace": "Shareable trace tier: redacted; message text kept as length and SHA-256 only.",
    "checkpoint": "PRIVATE checkpoint tier: complete, unredacted messages and state. Do not share.",
}


def export_zip(recorder: SessionRecorder, writer: TierWriter) -> Path:
    directory = writer.path.parent
    tier = writer.tier
    name = recorder.session_id + (fmt.CHECKPOINT_SUFFIX if tier == "checkpoint" else "") + fmt.ZIP_SUFFIX
    final = directory / name
    paths = fmt.child_files(directory, recorder.session_id, writer.path, tier)
    local = recorder.env.localtime
    stamp = local(recorder.stopped_ns / 1e9)  # the members' dates: when the session stopped
    with own_io():
        raw_snapshots: list[dict[str, Any]] = []
        snapshots = fmt.build_snapshots(lambda: fmt.iter_files(paths), raw_snapshots)
        total_entries = sum(1 for _ in fmt.iter_files(paths))
        metadata = {
            "session_id": recorder.session_id,
            "name": recorder.name,
            "start_time": time.strftime("%Y-%m-%dT%H:%M:%S", local(recorder.started_ns / 1e9)),
            "end_time": time.strftime("%Y-%m-%dT%H:%M:%S", stamp),
            "duration_seconds": round((recorder.stopped_ns - recorder.started_ns) / 1e9, 6),
            "hostname": _root_meta(paths[0]).get("hostname"),
            "platform": _root_meta(paths[0]).get("platform"),
            "python_version": _root_meta(paths[0]).get("python_version"),
            "packages": _root_meta(paths[0]).get("packages"),
            "serializer": "json",
            "total_events": total_entries,
            "total_snapshots": len(snapshots),
            "counts": dict(recorder.counts),
            "files": [p.name for p in paths],
            "tier": tier,
            "private": tier == "checkpoint",
            "note": TIER_NOTES.get(tier, ""),
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "metadata": recorder.user_metadata,
            "export_time": time.strftime("%Y-%m-%dT%H:%M:%S", local(recorder.env.clock() / 1e9)),
        }
        if tier != "checkpoint":  # shareable: the session name and user metadata are redacted too
            from otel_agent_trace.redaction import get_redactor

            metadata = get_redactor().redact(metadata)
        resume = _resume_state(snapshots, raw_snapshots[-1] if raw_snapshots else None, tier)
        tmp = directory / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        _unfinished.add(tmp)  # before it exists: no moment when it exists and is not known
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if tier == "checkpoint" else 0o644)
            with (
                os.fdopen(fd, "wb") as raw,
                zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf,
            ):
                with zf.open(_member(fmt.ZIP_EVENTS, stamp), "w", force_zip64=True) as member:
                    for path in paths:
                        with open(path, "rb") as src:
                            shutil.copyfileobj(src, member, 1 << 20)
                for member_name, value in (
                    (fmt.ZIP_SNAPSHOTS, snapshots),
                    (fmt.ZIP_METADATA, metadata),
                    (fmt.ZIP_RESUME, resume),
                ):
                    data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
                    zf.writestr(_member(member_name, stamp), data)
            os.link(tmp, final)  # fails rather than replace an existing file
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            _unfinished.discard(tmp)
    return final


def _member(name: str, stamp: time.struct_time) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=tuple(stamp)[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _root_meta(path: Path) -> dict[str, Any]:
    with open(path, "rb") as stream:
        first = stream.readline()
    try:
        return orjson.loads(first).get("metadata") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return {}


def _resume_state(
    snapshots: list[dict[str, Any]], last_raw: dict[str, Any] | None, tier: str
) -> dict[str, Any]:
    """What a resume needs: the latest snapshot, complete only in the checkpoint tier."""
    if not snapshots:
        return {"resumable": False, "reason": "no snapshot was recorded", "tier": tier}
    latest = snapshots[-1]
    resumable = tier == "checkpoint"
    return {
        "resumable": resumable,
        "reason": None if resumable else "trace tier keeps message hashes, not text",
        "tier": tier,
        "snapshot_id": latest["snapshot_id"],
        "messages": latest["agent_messages"],
        "system_prompt": latest["system_prompt"],
        "last_query": latest["last_query"],
        "last_result": latest["last_result"],
        "model_info": latest["model_info"],
        "cwd": latest["cwd"],
        "state": (last_raw or {}).get("state"),
    }
