"""``otel-agent-trace list [DIR]``: the sessions in a directory, newest first, one row each.

A session's files — trace and checkpoint ``.jsonl``, child-process files, ``.zip`` — are grouped
under its session id. Only the head of each file is read (its first line, or a ZIP's
``metadata.json``, both with a size cap) and the tail of a ``.jsonl`` (for the line that ends
it), so listing is fast whatever the sizes. Symbolic links, FIFOs, devices and directories are
skipped, never opened.

Each format says what its first line shows and what ends it (``heading``, ``listed_end``, in
:mod:`otel_agent_trace.offline.formats`): ours ``session.end``; a DM-Code-Agent file its last
``run_end`` (``status``, ``duration_seconds``: the agent's own measure, as DM's own summary takes
them, never its timestamps), looked for backwards from its end as far as its heading says.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import formats
from otel_agent_trace.offline import terminal as term
from otel_agent_trace.offline.formats import Format, Heading
from otel_agent_trace.settings import get_settings

HEAD_BYTES = 1 << 20  # the first line (session.start, with its metadata) must fit here
TAIL_BYTES = 64 << 10  # read backwards a block of this at a time for the line that ends a file
META_BYTES = 1 << 20  # a ZIP's metadata.json larger than this is not read

# <session>[.p<pid>][.checkpoint].(jsonl|zip)
_NAME = re.compile(r"^(?P<base>.+?)(?P<child>\.p\d+)?(?P<checkpoint>\.checkpoint)?\.(?P<ext>jsonl|zip)$")


@dataclass
class SessionFiles:
    """The files of one session in a directory, and what their heads say."""

    session_id: str
    files: list[Path] = field(default_factory=list)
    tiers: set[str] = field(default_factory=set)
    children: int = 0
    zips: int = 0
    start_ts: float | None = None  # seconds since the epoch
    duration_s: float | None = None
    complete: bool = False
    size: int = 0
    mtime: float = 0.0
    foreign: str | None = None
    status: str | None = None  # a DM-Code-Agent run's own status (its last run_end's)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "started": self.start_ts,
            "duration_s": self.duration_s,
            "complete": self.complete,
            "tiers": sorted(self.tiers),
            "child_files": self.children,
            "zips": self.zips,
            "bytes": self.size,
            "files": [p.name for p in self.files],
            **({"format": self.foreign} if self.foreign else {}),
            **({"status": self.status} if self.status is not None else {}),
        }


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="list recorded sessions",
        description="List the sessions in a directory, newest first. Exit codes: 0 ok, 2 the "
        "directory is missing or unreadable.",
    )
    p.add_argument(
        "directory", nargs="?", help="sessions directory (default: AGENT_TRACE_DIR or ./agent-sessions)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print one JSON document: {"directory": DIR, "sessions": [one object a session, newest first]}',
    )
    p.set_defaults(func=run)


def sessions_directory(given: str | None) -> Path:
    """The directory to look in; a clear error when it does not exist or is not a directory."""
    directory = Path(given).expanduser() if given else get_settings().directory
    if not directory.exists():
        raise FileNotFoundError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise fmt.SessionFormatError(directory, None, "not a directory")
    return directory


def _first_line(path: Path) -> dict[str, Any] | None:
    with open(path, "rb") as stream:
        line = stream.readline(HEAD_BYTES)
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None


def _last_end(path: Path, size: int, format: Format, heading: Heading) -> tuple[float | None, str] | None:
    """What the format says of the last line holding the heading's end marker that it takes for
    the session's end (``None`` when there is none in the last ``end_scan`` bytes), read
    backwards a block of :data:`TAIL_BYTES` at a time."""
    end, carry = size, b""
    with open(path, "rb") as stream:
        while end > 0 and size - end < heading.end_scan:
            start = max(end - TAIL_BYTES, 0)
            stream.seek(start)
            lines = (stream.read(end - start) + carry).split(b"\n")
            carry = lines.pop(0) if start > 0 else b""  # (its start is in the block before)
            for line in reversed(lines):
                if heading.end_marker not in line:
                    continue
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                found = format.listed_end(entry) if isinstance(entry, dict) else None
                if found is not None:
                    return found
            end = start
    return None


def _zip_metadata(path: Path) -> dict[str, Any] | None:
    """A session ZIP's ``metadata.json`` (``None`` when it is not a session ZIP)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if fmt.ZIP_EVENTS not in names:
                return None
            try:
                info = zf.getinfo(fmt.ZIP_METADATA)
            except KeyError:
                return {}
            if info.file_size > META_BYTES or info.flag_bits & 0x1:  # too large, or encrypted
                return {}
            meta = orjson.loads(zf.read(info))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError):
        return None
    return meta if isinstance(meta, dict) else {}


def _timestamp(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value / 1e9 if value > 1e12 else float(value)
    if isinstance(value, str):
        for pattern in (
            "%Y-%m-%dT%H:%M:%S%z",
            "%Y-%m-%dT%H:%M:%S.%f%z",
            "%Y-%m-%dT%H:%M:%S.%f",
            "%Y-%m-%dT%H:%M:%S",
        ):
            try:
                return (
                    time.mktime(time.strptime(value, pattern))
                    if "%z" not in pattern
                    else _aware(value, pattern)
                )
            except ValueError:
                continue
    return None


def _aware(value: str, pattern: str) -> float:
    from datetime import datetime

    return datetime.strptime(value, pattern).timestamp()


def _read_one(path: Path, st: os.stat_result) -> tuple[str, dict[str, Any]] | None:
    """``(session id, facts)`` of one regular file, or ``None`` when it is not a session file."""
    match = _NAME.match(path.name)
    if match is None:
        return None
    facts: dict[str, Any] = {"child": bool(match["child"]), "checkpoint": bool(match["checkpoint"])}
    if match["ext"] == "zip":
        meta = _zip_metadata(path)
        if meta is None:
            return None
        facts["zip"] = True
        facts["tier"] = meta.get("tier") or (fmt.CHECKPOINT if match["checkpoint"] else None)
        facts["start"] = _timestamp(meta.get("start_time"))
        facts["duration"] = (
            meta.get("duration_seconds") if isinstance(meta.get("duration_seconds"), (int, float)) else None
        )
        facts["complete"] = meta.get("end_time") is not None or facts["duration"] is not None
        format = next((f for f in formats.FORMATS if f.matches_archive(meta)), None)
        facts["foreign"] = None if format is formats.native else (format.NAME if format else "unknown")
        session_id = meta.get("session_id")
        return (session_id if isinstance(session_id, str) and session_id else match["base"]), facts
    first = _first_line(path) if st.st_size else None
    if first is None:
        return None
    found = next(
        ((f, h) for f in formats.FORMATS if (h := f.heading(first, match["base"])) is not None), None
    )
    if found is None:
        return None
    format, heading = found
    facts.update(start=_timestamp(heading.start), tier=heading.tier)
    if heading.child is not None:
        facts["child"] = heading.child
    if format is not formats.native:
        facts["foreign"] = format.NAME
    end = _last_end(path, st.st_size, format, heading)
    facts["complete"] = end is not None
    facts["duration"], facts["status"] = end if end is not None else (None, "")
    return heading.session_id or match["base"], facts


def find_sessions(directory: Path) -> list[SessionFiles]:
    """The sessions in ``directory`` (not its subdirectories), newest first."""
    groups: dict[str, SessionFiles] = {}
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for item in entries:
        if item.name.startswith("."):  # a ZIP being written (hidden temporary), or not ours
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):  # symlinks (dangling or not), FIFOs, devices, directories
            continue
        path = Path(item.path)
        try:
            found = _read_one(path, st)
        except OSError:
            continue
        if found is None:
            continue
        session_id, facts = found
        group = groups.setdefault(session_id, SessionFiles(session_id))
        group.files.append(path)
        group.size += st.st_size
        group.mtime = max(group.mtime, st.st_mtime)
        if facts.get("zip"):
            group.zips += 1
        elif facts.get("child"):
            group.children += 1
        if facts.get("tier"):
            group.tiers.add(str(facts["tier"]))
        if facts.get("foreign"):
            group.foreign = facts["foreign"]
        if facts.get("status"):
            group.status = str(facts["status"])
        if not facts.get("child"):
            if facts.get("start") is not None:
                group.start_ts = (
                    facts["start"] if group.start_ts is None else min(group.start_ts, facts["start"])
                )
            group.complete = group.complete or bool(facts.get("complete"))
            if facts.get("duration") is not None:
                group.duration_s = float(facts["duration"])
    return sorted(groups.values(), key=lambda g: (g.start_ts or g.mtime, g.session_id), reverse=True)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def row(group: SessionFiles) -> str:
    """One line for a session: id, start, duration, state, tiers, size, files."""
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(group.start_ts)) if group.start_ts else "?"
    state = term.fit(group.status, 20) if group.status else "complete" if group.complete else "unfinished"
    files = []
    if group.zips:
        files.append("zip" if group.zips == 1 else f"{group.zips} zips")
    if group.children:
        files.append(f"+{group.children} child file{'s' if group.children > 1 else ''}")
    tiers = ",".join(sorted(group.tiers)) or (group.foreign or "?")
    took = term.duration(group.duration_s) if group.duration_s is not None else "-"
    return (
        f"{term.fit(group.session_id, 64)}  {started}  {took:>8}  {state:<10}  {term.fit(tiers, 24):<16}  "
        f"{_size(group.size):>9}  {' '.join(files)}"
    )


def run(args: argparse.Namespace) -> int:
    directory = sessions_directory(args.directory)
    groups = find_sessions(directory)
    out = sys.stdout
    if args.json:
        out.write(
            term.json_document({"directory": str(directory), "sessions": [g.to_dict() for g in groups]})
        )
        return 0
    if not groups:
        print(f"no sessions in {term.clean(directory)}")
        return 0
    columns = term.width(out)
    for group in groups:
        out.write(term.fit(row(group), columns) + "\n")
    return 0
