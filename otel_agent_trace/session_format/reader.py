"""Reading session files: one line in memory at a time, bad lines named by file and line."""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from .schema import CHECKPOINT_SUFFIX, JSONL_SUFFIX, ZIP_EVENTS, SessionFormatError


@dataclass
class ReadIssue:
    """Something a reader tolerated: a torn last line, a blank line."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def iter_lines(
    stream: IO[bytes], path: str, *, issues: list[ReadIssue] | None = None, strict: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, entry)`` from a JSONL stream, one line in memory at a time.

    A last line that does not parse (the process died mid-write) is tolerated and reported in
    ``issues``. A bad line elsewhere raises :class:`SessionFormatError` naming file and line,
    unless ``strict`` is false and ``issues`` is given, in which case it is skipped and reported.
    """
    pending: tuple[int, bytes] | None = None
    number = 0
    for number, raw in enumerate(stream, 1):
        if pending is not None:
            entry = _parse(pending[1], path, pending[0], issues, strict, last=False)
            if entry is not None:
                yield pending[0], entry
        pending = (number, raw)
    if pending is not None:
        entry = _parse(pending[1], path, pending[0], issues, strict, last=True)
        if entry is not None:
            yield pending[0], entry


def _parse(
    raw: bytes, path: str, number: int, issues: list[ReadIssue] | None, strict: bool, last: bool
) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        torn = last and not raw.endswith(b"\n")
        reason = "torn last line (the writer stopped mid-line); ignored" if torn else f"not JSON ({exc})"
        if torn or (issues is not None and not strict):
            if issues is not None:
                issues.append(ReadIssue(path, number, reason))
            return None
        raise SessionFormatError(path, number, reason) from None
    if not isinstance(entry, dict):
        reason = f"expected a JSON object, got {type(entry).__name__}"
        if issues is not None and not strict:
            issues.append(ReadIssue(path, number, reason))
            return None
        raise SessionFormatError(path, number, reason)
    return entry


def is_session_entry(entry: dict[str, Any]) -> bool:
    return "id" in entry and "type" in entry


# --- files, ZIPs and child-process files -----------------------------------------------------

_ZIP_ERRORS = (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError)


def _starts_like_zip(path: Path) -> bool:
    with open(path, "rb") as stream:
        return stream.read(4) == b"PK\x03\x04"


@contextmanager
def open_events(path: Path) -> Iterator[tuple[IO[bytes], str]]:
    """The session tree stream of a JSONL file or a session ZIP, with a name for messages."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    is_zip = zipfile.is_zipfile(path)
    if not is_zip and _starts_like_zip(path):
        raise SessionFormatError(path, None, "truncated or corrupt ZIP (no central directory)")
    if not is_zip:
        with open(path, "rb") as stream:
            yield stream, str(path)
        return
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SessionFormatError(path, None, f"not a readable ZIP ({exc})") from None
    with zf:
        if ZIP_EVENTS not in zf.namelist():
            raise SessionFormatError(path, None, f"ZIP has no {ZIP_EVENTS}")
        try:
            with zf.open(ZIP_EVENTS) as member:
                yield io.BufferedReader(member, 1 << 20), f"{path}!{ZIP_EVENTS}"  # type: ignore[arg-type]
        except _ZIP_ERRORS as exc:
            raise SessionFormatError(path, None, f"corrupt ZIP member {ZIP_EVENTS} ({exc})") from None


def iter_entries(
    path: str | os.PathLike[str], issues: list[ReadIssue] | None = None, *, strict: bool = False
) -> Iterator[dict[str, Any]]:
    """Stream the entries of a session file or ZIP, one line in memory at a time.

    A torn last line is skipped (and noted in ``issues``); any other bad line raises
    :class:`SessionFormatError` naming the file and line, unless ``issues`` is given and
    ``strict`` is false, then it is skipped and noted.
    """
    path = Path(path)
    with open_events(path) as (stream, name):
        try:
            for _, entry in iter_lines(stream, name, issues=issues, strict=strict):
                yield entry
        except _ZIP_ERRORS as exc:
            raise SessionFormatError(path, None, f"corrupt ZIP ({exc})") from None


def child_files(directory: Path, session_id: str, own: Path, tier: str) -> list[Path]:
    """A session's file of one tier followed by its child processes' files of that tier (sorted):
    ``<session>.p<pid>[.checkpoint].jsonl`` beside it."""
    children = []
    checkpoint_tail = CHECKPOINT_SUFFIX + JSONL_SUFFIX
    for path in directory.glob(f"{session_id}.p*{JSONL_SUFFIX}"):
        is_checkpoint = path.name.endswith(checkpoint_tail)
        if path != own and is_checkpoint == (tier == "checkpoint"):
            children.append(path)
    return [own, *sorted(children)]


def iter_files(paths: list[Path], issues: list[ReadIssue] | None = None) -> Iterator[dict[str, Any]]:
    """The entries of several JSONL files in turn (a session file and its child files)."""
    for path in paths:
        with open(path, "rb") as stream:
            for _, entry in iter_lines(stream, str(path), issues=[] if issues is None else issues):
                yield entry
