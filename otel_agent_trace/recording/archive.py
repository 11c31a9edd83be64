"""The session ZIP: written at stop, atomically, never over another file.

Members: ``events.jsonl`` (the session tree, the parent's file then its child processes'),
``snapshots.json`` (DevDuck's shape), ``metadata.json`` and ``resume.json`` (the latest snapshot's
state as JSON; no pickle is ever written).
"""

from __future__ import annotations

import io
import os
import secrets
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io
from otel_agent_trace.session_format.reader import open_regular

if TYPE_CHECKING:
    from .recorder import SessionRecorder
    from .writer import TierWriter

# ``fmt`` loads its modules on first use; an export's are loaded with this module (at session
# start: lifecycle.start_session), not at exit, where defining their dataclasses would make an
# interrupted CPython exit with status 1 instead of dying of SIGINT.
_USES = (fmt.child_files, fmt.iter_lines, fmt.snapshot_view)

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
        tmp = directory / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        _unfinished.add(tmp)  # before it exists: no moment when it exists and is not known
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if tier == "checkpoint" else 0o644)
            with open(fd, "wb", closefd=True) as raw, zipfile.ZipFile(raw, "w") as zf:
                size = sum(_size(path) for path in paths)
                scans = []
                with zf.open(_member(fmt.ZIP_EVENTS, stamp, size), "w", force_zip64=True) as member:
                    for path in paths:
                        scans.append(_copy_and_scan(path, member))
                snapshots, raw_snapshots, total_entries = _snapshots(scans)
                metadata = _metadata(recorder, paths, stamp, tier, total_entries, len(snapshots))
                resume = _resume_state(snapshots, raw_snapshots[-1] if raw_snapshots else None, tier)
                for member_name, value in (
                    (fmt.ZIP_SNAPSHOTS, snapshots),
                    (fmt.ZIP_METADATA, metadata),
                    (fmt.ZIP_RESUME, resume),
                ):
                    data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
                    zf.writestr(_member(member_name, stamp, len(data)), data)
            os.link(tmp, final)  # fails rather than replace an existing file
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            _unfinished.discard(tmp)
    return final


def _metadata(
    recorder: SessionRecorder,
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
        "metadata": recorder.user_metadata,
        "export_time": time.strftime("%Y-%m-%dT%H:%M:%S", local(recorder.env.clock() / 1e9)),
    }
    if tier != "checkpoint":  # shareable: the session name and user metadata are redacted too
        from otel_agent_trace.redaction import get_redactor

        metadata = get_redactor().redact(metadata)
    return metadata


# --- compression per member -----------------------------------------------------------------
#
# Deflate at level 6 runs at ~40 MB/s here, level 1 at ~150 MB/s; copying a stored member runs at
# the speed of the disk. A member up to STORE_ABOVE bytes is deflated at level 1 (a small session's
# ZIP stays small, in well under a second); a bigger one is stored, so a session of several GB is
# written within a killed pod's grace period (docs/benchmarks/zip.md). A stored member is never
# taken for a bomb by the reader (its size is its compressed size).

STORE_ABOVE = 32 << 20
FAST_LEVEL = 1


def _member(name: str, stamp: time.struct_time, size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=tuple(stamp)[:6])
    if size > STORE_ABOVE:
        info.compress_type = zipfile.ZIP_STORED
    else:
        info.compress_type = zipfile.ZIP_DEFLATED
        # ZipInfo has no public setter for it: 3.13 spells it compress_level, earlier _compresslevel
        setattr(info, "compress_level" if hasattr(info, "compress_level") else "_compresslevel", FAST_LEVEL)
    info.external_attr = 0o644 << 16
    return info


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# --- snapshots.json without parsing every line -----------------------------------------------
#
# Only the lines that can be a snapshot or a message entry are parsed: those holding the type's
# name as a JSON string (any line of that type does; a few others may, and are parsed and told
# apart as before). The rest are only counted, by newline, a chunk at a time. The lines kept are
# read by ``fmt.iter_lines`` after the file's root entry, as the whole file would be (a format 1.2
# file is upgraded alike), and the snapshots built by ``fmt.snapshot_view`` as
# ``fmt.build_snapshots`` builds them: the same ``snapshots.json`` as before, at copying speed.

_CHUNK = 4 << 20
_SNAPSHOT_TOKEN = b'"' + fmt.SNAPSHOT.encode() + b'"'
_MESSAGE_TOKEN = b'"' + fmt.MESSAGE.encode() + b'"'
_ID_PREFIX = b'{"id":"'  # how the writer starts every line


class _Scan:
    """What the copy of one file found: its root line, its candidate snapshot lines (with their
    entry number in the session) and how many entries it holds."""

    def __init__(self, path: Path, first_index: int):
        self.path = path
        self.first_index = first_index
        self.root: bytes | None = None
        self.snapshot_lines: list[tuple[int, bytes]] = []
        self.entries = 0


def _blocks(path: Path) -> Iterator[tuple[bytes, bytes, int]]:
    """``(chunk, buf, end)`` for each chunk read from ``path``: ``buf[:end]`` holds whole lines
    (those the chunk completes); a last line without a newline comes last, with one added."""
    carry = b""
    with open_regular(path) as src:
        while chunk := src.read(_CHUNK):
            buf = carry + chunk if carry else chunk
            end = buf.rfind(b"\n") + 1
            carry = buf[end:]
            yield chunk, buf, end
    if carry.strip():
        try:  # a line cut short by a crash is left out, as the reader leaves it out
            orjson.loads(carry)
        except orjson.JSONDecodeError:
            return
        yield b"", carry + b"\n", len(carry) + 1


def _copy_and_scan(path: Path, member: Any) -> _Scan:
    """Copy ``path`` into the ZIP member, noting its root line, its candidate snapshot lines and
    how many entries it holds (lines, counted by newline between the candidates)."""
    scan = _Scan(path, 0)
    count = 0
    token = _SNAPSHOT_TOKEN
    found = scan.snapshot_lines
    for chunk, buf, end in _blocks(path):
        if chunk:
            member.write(chunk)
        pos = 0
        if scan.root is None and end:
            pos = buf.find(b"\n", 0, end) + 1
            scan.root = buf[: pos - 1]
            count = 1
        counted = pos
        at = buf.find(token, pos, end)
        while at >= 0:
            start = buf.rfind(b"\n", pos, at) + 1 or pos
            stop = buf.find(b"\n", at, end)
            count += buf.count(b"\n", counted, start)
            counted = start
            found.append((count, buf[start:stop]))
            at = buf.find(token, stop + 1, end)
        count += buf.count(b"\n", counted, end)
    scan.entries = count
    return scan


def _message_lines(scan: _Scan, needed: set[str]) -> list[bytes]:
    """The lines of ``scan.path`` that may be one of the ``needed`` message entries (an entry whose
    line does not start with its id is kept, to be told apart once parsed)."""
    out: list[bytes] = []
    token, prefix, skip = _MESSAGE_TOKEN, _ID_PREFIX, len(_ID_PREFIX)
    wanted = {i.encode() for i in needed}
    first = True
    for _, buf, end in _blocks(scan.path):
        pos = 0
        if first and end:
            pos = buf.find(b"\n", 0, end) + 1  # the root entry
            first = False
        at = buf.find(token, pos, end)
        while at >= 0:
            start = buf.rfind(b"\n", pos, at) + 1 or pos
            stop = buf.find(b"\n", at, end)
            at = buf.find(token, stop + 1, end)
            if buf.startswith(prefix, start):
                close = buf.find(b'"', start + skip, stop)
                if close > 0 and buf[start + skip : close] not in wanted:
                    continue
            out.append(buf[start:stop])
    return out


def _parsed(scan: _Scan, lines: list[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(position in lines, entry)`` for the lines that parse, read after the file's root entry
    as the reader reads the whole file."""
    if scan.root is None or not lines:
        return
    stream = io.BytesIO(b"\n".join((scan.root, *lines)) + b"\n")
    for number, entry in fmt.iter_lines(stream, str(scan.path), issues=[]):
        if number > 1:
            yield number - 2, entry


def _snapshots(scans: list[_Scan]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """``snapshots.json``'s snapshots, the snapshot entries, and the session's entry count: what
    ``fmt.build_snapshots`` gives from every entry, from the scanned lines only."""
    found: list[tuple[int, dict[str, Any]]] = []
    offset = 0
    for scan in scans:
        for k, entry in _parsed(scan, [line for _, line in scan.snapshot_lines]):
            if entry.get("type") == fmt.SNAPSHOT:
                found.append((offset + scan.snapshot_lines[k][0], entry))
        offset += scan.entries
    needed: set[str] = set()
    for _, entry in found:
        ids = entry.get("message_ids")
        if isinstance(ids, list):
            needed.update(i for i in ids if isinstance(i, str))
    messages: dict[str, dict[str, Any]] = {}
    if needed:
        for scan in scans:
            for _, entry in _parsed(scan, _message_lines(scan, needed)):
                if entry.get("type") == fmt.MESSAGE and entry.get("id") in needed:
                    messages[entry["id"]] = entry
    views = []
    previous = -1
    for index, entry in found:
        views.append(fmt.snapshot_view(entry, messages, index - previous - 1))
        previous = index
    return views, [entry for _, entry in found], offset


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
