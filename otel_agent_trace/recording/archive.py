"""The session ZIP: written at stop, atomically, never over another file.

Members: ``events.jsonl`` (the session tree, the parent's file then its child processes'),
``snapshots.json`` (DevDuck's shape), ``metadata.json`` and ``resume.json`` (the latest snapshot's
state as JSON; no pickle is ever written).
"""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io

from . import zip_ahead
from .snapshot_scan import Found, ReadAhead, Written, file_size, find_snapshots, scan
from .snapshot_spool import AheadViews, Doubt
from .zip_container import finished, member, temporary, zip_after, zip_name

if TYPE_CHECKING:
    from .environment import Environment
    from .writer import TierWriter


class RecordedSession(Protocol):
    """What the export reads of the session it exports (a ``SessionRecorder``, stopped)."""

    session_id: str
    name: str | None
    user_metadata: dict[str, Any]
    started_ns: int
    stopped_ns: int
    counts: dict[str, int]
    env: Environment


# ``fmt`` loads its modules on first use; an export's are loaded with this module (at session
# start: lifecycle.start_session), not at exit, where defining their dataclasses would make an
# interrupted CPython exit with status 1 instead of dying of SIGINT.
_USES = (fmt.child_files, fmt.iter_lines, fmt.snapshot_view, fmt.message_view)

TIER_NOTES = {
    "trace": "Shareable trace tier: redacted; message text kept as length and SHA-256 only.",
    "checkpoint": "PRIVATE checkpoint tier: complete, unredacted messages and state. Do not share.",
}


def export_zip(recorder: RecordedSession, writer: TierWriter) -> Path:
    directory = writer.path.parent
    tier = writer.tier
    final = directory / zip_name(recorder.session_id, tier)
    paths = fmt.child_files(directory, recorder.session_id, writer.path, tier)
    stamp = recorder.env.localtime(recorder.stopped_ns / 1e9)  # the members' dates: when it stopped
    ahead = zip_ahead.take(writer)
    with own_io():
        if ahead is not None:  # its events.jsonl copied while it ran: the rest of the ZIP now
            try:
                return _finish_ahead(recorder, writer, ahead, paths, stamp, final)
            except (Doubt, FileNotFoundError):  # the file is not as its writer says, or the
                pass  # copy was removed (by hand): the files are copied and scanned again
            finally:
                ahead.close(remove=True)
        tmp = temporary(directory, final.name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if tier == "checkpoint" else 0o644)
            with open(fd, "wb", closefd=True) as raw, zipfile.ZipFile(raw, "w") as zf:
                size = sum(file_size(path) for path in paths)
                with zf.open(member(fmt.ZIP_EVENTS, stamp, size), "w", force_zip64=True) as events:
                    reader = ReadAhead(paths, events.write)
                    try:
                        found = find_snapshots(paths, reader, Written.of(writer, writer.path))
                    finally:
                        reader.close()
                try:
                    _small_members(zf, recorder, paths, stamp, tier, found, size)
                finally:
                    found.snapshots.close()
            os.link(tmp, final)  # fails rather than replace an existing file
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            finished(tmp)
    return final


def _finish_ahead(
    recorder: RecordedSession,
    writer: TierWriter,
    ahead: zip_ahead.ZipAhead,
    paths: list[Path],
    stamp: time.struct_time,
    final: Path,
) -> Path:
    """The ZIP of a session whose ``events.jsonl`` was copied while it ran (``recording.zip_ahead``):
    what is left of its own file and its child processes' files copied, its snapshot lines read
    where its writer wrote them, the other members and the central directory written after."""
    written = Written.of(writer, writer.path)
    if written is None or ahead.copied > written.written:
        raise Doubt
    ahead.copy(written.written)
    # Its snapshot lines: those written since the copy thread last looked (all of them when it
    # took none, or its doubt dropped them); a doubt here and the export copies it all.
    views = ahead.take_views()
    try:
        if views is not None:
            try:
                views.advance(ahead.src, written.offsets, written.lines, written.written, final=True)
            except (Doubt, OSError):
                views.close()
                views = None
        if views is None:
            views = AheadViews(paths[0])
            views.advance(ahead.src, written.offsets, written.lines, written.written, final=True)
        reader = ReadAhead(paths[1:], ahead.write)
        try:  # the session's own file is done: its child processes' files are scanned
            found = scan(paths, reader, written, None, views)
        finally:
            reader.close()
    except BaseException:
        if views is not None:  # (its file's descriptor: closed here, not left to the collector)
            views.close()
        raise
    size = ahead.copied
    info = ahead.finish(stamp)
    with open(ahead.dst, "r+b", closefd=False) as raw:
        raw.seek(ahead.end())
        with zip_after(raw, info) as zf:  # its central directory starts after the member
            try:
                _small_members(zf, recorder, paths, stamp, writer.tier, found, size)
            finally:
                found.snapshots.close()
    os.link(ahead.tmp, final)  # fails rather than replace an existing file
    return final


def _small_members(
    zf: zipfile.ZipFile,
    recorder: RecordedSession,
    paths: list[Path],
    stamp: time.struct_time,
    tier: str,
    found: Found,
    size: int,
) -> None:
    """``snapshots.json``, ``metadata.json`` and ``resume.json`` (``size``: the session's)."""
    snapshots = found.snapshots
    metadata = _metadata(recorder, paths, stamp, tier, found.total, snapshots.count)
    resume = _resume_state(found, tier)
    length = snapshots.finish()
    info = member(fmt.ZIP_SNAPSHOTS, stamp, max(size, length))
    with zf.open(info, "w", force_zip64=length >= zipfile.ZIP64_LIMIT) as out:
        snapshots.copy(out.write)
    for member_name, value in ((fmt.ZIP_METADATA, metadata), (fmt.ZIP_RESUME, resume)):
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        zf.writestr(member(member_name, stamp, max(size, len(data))), data)


def _metadata(
    recorder: RecordedSession,
    paths: list[Path],
    stamp: time.struct_time,
    tier: str,
    entries: int,
    snapshots: int,
) -> dict[str, Any]:
    local = recorder.env.localtime
    root = _root_meta(paths[0])
    metadata = {
        "session_id": recorder.session_id,
        "name": recorder.name,
        "start_time": time.strftime("%Y-%m-%dT%H:%M:%S", local(recorder.started_ns / 1e9)),
        "end_time": time.strftime("%Y-%m-%dT%H:%M:%S", stamp),
        "duration_seconds": round((recorder.stopped_ns - recorder.started_ns) / 1e9, 6),
        "hostname": root.get("hostname"),
        "platform": root.get("platform"),
        "python_version": root.get("python_version"),
        "packages": root.get("packages"),
        "serializer": "json",
        "total_events": entries,
        "total_snapshots": snapshots,
        "counts": dict(recorder.counts),
        "files": [p.name for p in paths],
        "tier": tier,
        "private": tier == "checkpoint",
        "note": TIER_NOTES.get(tier, ""),
        "format": fmt.FORMAT_NAME,
        "format_version": fmt.FORMAT_VERSION,
        "snapshots_format": fmt.ZIP_SNAPSHOTS_FORMAT,
        "metadata": recorder.user_metadata,
        "export_time": time.strftime("%Y-%m-%dT%H:%M:%S", local(recorder.env.clock() / 1e9)),
    }
    if tier != "checkpoint":  # shareable: the session name and user metadata are redacted too
        from otel_agent_trace.redaction import get_redactor

        metadata = get_redactor().redact(metadata)
    return metadata


def _root_meta(path: Path) -> dict[str, Any]:
    with open(path, "rb") as stream:
        first = stream.readline()
    try:
        return orjson.loads(first).get("metadata") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return {}


def _resume_state(found: Found, tier: str) -> dict[str, Any]:
    """What a resume needs: the latest snapshot, complete only in the checkpoint tier."""
    latest = found.snapshots.latest
    if latest is None:
        return {"resumable": False, "reason": "no snapshot was recorded", "tier": tier}
    resumable = tier == "checkpoint"
    return {
        "resumable": resumable,
        "reason": None if resumable else "trace tier keeps message hashes, not text",
        "tier": tier,
        "snapshot_id": latest["snapshot_id"],
        "messages": found.last_messages,
        "system_prompt": latest["system_prompt"],
        "last_query": latest["last_query"],
        "last_result": latest["last_result"],
        "model_info": latest["model_info"],
        "cwd": latest["cwd"],
        "state": found.last.get("state") if found.last is not None else None,
    }
