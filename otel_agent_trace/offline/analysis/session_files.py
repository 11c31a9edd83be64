"""Which files of a directory are sessions, one per session, and the child-process files of each.

A session is counted once: its trace-tier ``.jsonl`` (with its child files), else its
checkpoint-tier ``.jsonl``, else its ZIP. Child-process files (``<session>.p<pid>.jsonl``) are
part of their parent's session, never sessions of their own. A ZIP beside a ``.jsonl`` of the
same name is that session archived, unless the two name different sessions (the JSONL's first
line, the ZIP's ``metadata.json``): then both count.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import orjson

from otel_agent_trace import session_format as fmt

from ..formats import FORMATS
from ..jsonvalue import JSONValue

_CHILD = re.compile(r"\.p\d+(\.checkpoint)?\.jsonl$")
_RANK = {".jsonl": 0, ".checkpoint.jsonl": 1, ".zip": 2, ".checkpoint.zip": 3}
_ZIPS = 2  # the first rank of a ZIP
HEAD_BYTES = 1 << 20  # a session's first line is read up to this
META_BYTES = 1 << 20  # a ZIP's metadata.json larger than this is not read


def suffix_of(name: str) -> str | None:
    """A session file name's suffix (``.jsonl``, ``.checkpoint.zip`` …), ``None`` for another."""
    for suffix in (".checkpoint.jsonl", ".checkpoint.zip", ".jsonl", ".zip"):
        if name.endswith(suffix):
            return suffix
    return None


def find_sessions(directory: Path, pattern: str | None = None, recursive: bool = False) -> list[Path]:
    """The session files under ``directory``, one per session, sorted by path.

    ``pattern`` is a glob on file names (default: every ``.jsonl`` and ``.zip``). Symlinks to
    files are followed, dangling ones and anything not a regular file (a FIFO) skipped.
    """
    globs = [pattern] if pattern else ["*.jsonl", "*.zip"]
    chosen: dict[tuple[Path, str], tuple[int, Path]] = {}
    zips: dict[tuple[Path, str], tuple[int, Path]] = {}  # the first ZIP of each name
    for glob in globs:
        found = directory.rglob(glob) if recursive else directory.glob(glob)
        for path in found:
            name = path.name
            suffix = suffix_of(name)
            if _CHILD.search(name):
                continue
            try:
                if not path.is_file():
                    continue
            except OSError:
                continue
            stem = name[: -len(suffix)] if suffix else name
            rank = _RANK.get(suffix or "", 4)
            key = (path.parent, stem)
            if key not in chosen or rank < chosen[key][0]:
                chosen[key] = (rank, path)
            if rank in (_ZIPS, _ZIPS + 1) and (key not in zips or rank < zips[key][0]):
                zips[key] = (rank, path)
    paths: list[Path] = []
    for key, (rank, path) in chosen.items():
        paths.append(path)
        archive = zips.get(key)
        if rank < _ZIPS and archive is not None and not _same_session(path, archive[1]):
            paths.append(archive[1])
    return sorted(paths)


def _same_session(jsonl: Path, archive: Path) -> bool:
    """Whether a ZIP holds the session of the JSONL of its name: unless both name their session
    and the names differ (a file that names none is named by its file, as ``list`` does)."""
    ours, its = _jsonl_session(jsonl), _zip_session(archive)
    return ours is None or its is None or ours == its


def _jsonl_session(path: Path) -> str | None:
    """The session a JSONL file's first line names (any format's), ``None`` when it names none."""
    try:
        with open(path, "rb") as stream:
            first: JSONValue = orjson.loads(stream.readline(HEAD_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(first, dict):
        return None
    for format in FORMATS:
        heading = format.heading(first, path.name)
        if heading is not None:
            return heading.session_id
    return None


def _zip_session(path: Path) -> str | None:
    """The session a ZIP's ``metadata.json`` names, ``None`` when it names none or is unread."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(fmt.ZIP_METADATA)
            if info.file_size > META_BYTES or info.flag_bits & 0x1:  # too large, or encrypted
                return None
            meta: JSONValue = orjson.loads(zf.read(info))
    except (KeyError, zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError):
        return None
    session_id = meta.get("session_id") if isinstance(meta, dict) else None
    return session_id if isinstance(session_id, str) and session_id else None


def child_files(paths: list[Path]) -> dict[Path, list[Path]]:
    """The child-process files of each JSONL session, each directory listed once (looking them
    up session by session would list a directory of N sessions N times)."""
    by_dir: dict[Path, dict[tuple[str, bool], list[Path]]] = {}
    out: dict[Path, list[Path]] = {}
    for path in paths:
        suffix = suffix_of(path.name)
        if suffix not in (".jsonl", ".checkpoint.jsonl"):
            continue
        if path.parent not in by_dir:
            found: dict[tuple[str, bool], list[Path]] = {}
            try:
                names = sorted(entry.name for entry in os.scandir(path.parent))
            except OSError:
                names = []
            for name in names:
                match = _CHILD.search(name)
                if match:
                    stem = name[: match.start()]
                    found.setdefault((stem, bool(match.group(1))), []).append(path.parent / name)
            by_dir[path.parent] = found
        stem = path.name[: -len(suffix)]
        out[path] = by_dir[path.parent].get((stem, suffix == ".checkpoint.jsonl"), [])
    return out
