"""Reading session files: one line in memory at a time, bad lines named by file and line, and
bounded memory whatever the input.

Only regular files are opened (a FIFO, ``/dev/zero`` or a directory is refused before anything is
read); lines longer than :data:`MAX_LINE_BYTES` are refused as they are read, never held whole;
runs of blank lines are skipped a chunk (64 KiB) at a time; ZIP members are checked before they are
opened (one member of a name, not encrypted, a known compression, a size cap, and an inflated size
at most :data:`MAX_RATIO` times the compressed one).
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from collections.abc import Generator, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from io import BytesIO
from operator import length_hint
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from .checks import BadEntry, check_entry
from .schema import CHECKPOINT_SUFFIX, JSONL_SUFFIX, ZIP_EVENTS, SessionFormatError
from .upgrade import Upgrade, compact_version

MAX_LINE_BYTES = 32 << 20
"""The longest line read (32 MiB); a longer one is a bad line, dropped as it is read."""
MAX_LINE_VALUES = 1 << 20
"""The most JSON values a line (or a ZIP member read whole) may hold (about a million): what
memory costs is values, not bytes — ``[{},{},…]`` in 31 MiB is ten million objects, a gigabyte
once parsed. A real entry holds far fewer (a thousand messages of ten fields each is 10^4; the
largest line of the tests' recordings, about 200); a million values parse to at most about
100 MB. A line with more is a bad line, refused before it is parsed."""
MAX_EVENTS_BYTES = 64 << 30
"""The largest ``events.jsonl`` member (inflated) a ZIP may declare."""
MAX_JSON_MEMBER_BYTES = 64 << 20
"""The largest ``metadata.json`` / ``snapshots.json`` / ``resume.json`` member read (whole)."""


MAX_RATIO = 100
"""A member above 1 MiB may inflate to at most this many times its compressed size (real
sessions: 5-20; a deflate bomb: ~1000)."""
_RATIO_FLOOR = 1 << 20
_CHUNK = 1 << 16  # small enough that a chunk's lines are still in the cache when analysed
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_BLANK = re.compile(rb"[ \t\r\n]+")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')  # a JSON string (its escapes included)
_BOM = b"\xef\xbb\xbf"


@dataclass
class ReadIssue:
    """Something a reader tolerated: a torn last line, a skipped bad line, a tree defect."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"


# --- lines ----------------------------------------------------------------------------------------
#
# One generator does the work for the common case (a file of JSON lines, no blank lines): it reads
# a chunk, splits it into its lines in one call, parses each with ``orjson.loads`` and yields the
# dict. Line numbers are not counted line by line: a chunk's lines are numbered from the chunk's
# first (``base``), and the number of a line is worked out only when it is bad. Chunks are small
# (64 KiB) so a chunk's lines are still in the cache when they are parsed and their entries
# analysed. What is not common goes to :func:`_bad_line` or to the chunk level (:func:`_blocks`):
# a line continued from the previous chunk, a line longer than the cap, blank lines, the last line.


class Readable(Protocol):
    """What the line reader reads from: a file opened in binary mode, or anything with its
    ``read``."""

    def read(self, size: int = -1, /) -> bytes: ...


def _blocks(
    stream: Readable, path: str, max_line: int, careful: list[bool]
) -> Iterator[tuple[int, list[bytes | None], bool]]:
    """``(number, lines, ended)`` for the lines of the stream a chunk at a time: ``lines`` are the
    text of lines ``number``, ``number + 1``, ... (with or without their newline; ``None`` for a
    line over ``max_line``, whose bytes are dropped as they are read), ``ended`` whether the last
    of them had a newline (only the file's last line may not).

    A chunk's complete lines are split in one call (``BytesIO.readlines``: ``bytes.split`` looks
    at every byte, several times slower); the start of a line the chunk does not end is
    kept (in pieces, so a long line is copied once) until a later chunk ends it. A chunk with
    blank lines gives its other lines one at a time, numbered; one that is mostly newlines is
    walked run by run (one regular-expression step per run of blank lines). Once ``careful[0]``
    is set (the file has many lines of white space, each a failed parse), every chunk is given a
    line at a time without them.
    """
    pieces: list[bytes] = []  # the start of a line not yet ended
    pending = 0  # its length
    dropping = False  # within a line over max_line: its bytes are dropped until its newline
    number = 1  # the number of the line being read
    while True:
        chunk = _read(stream, path, number)
        if not chunk:
            break
        if dropping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            yield number, [None], True
            number += 1
            dropping = False
            chunk = chunk[newline + 1 :]
        if not chunk:
            continue
        lines: list[Any] = BytesIO(chunk).readlines()  # memchr from newline to newline
        tail = lines.pop() if lines[-1][-1:] != b"\n" else b""
        if not lines:  # no newline: the line goes on
            pieces.append(tail)
            pending += len(tail)
            if pending > max_line:
                pieces, pending, dropping = [], 0, True
            continue
        if pieces:
            pieces.append(lines[0])
            lines[0] = b"".join(pieces)
            pieces = []
        if max_line < len(chunk) + pending:  # a line may be over the cap (counted with its newline)
            lines = [raw if len(raw) <= max_line + 1 else None for raw in lines]
        lines[0] = _dense(lines[0])  # (only a line begun in an earlier chunk can be that long)
        pieces, pending = ([tail], len(tail)) if tail else ([], 0)
        if len(lines) * 8 > len(chunk):  # mostly blank lines (or very short ones)
            if lines[0] != b"\n":
                yield number, lines[:1], True
            first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
            for line_number, raw in _sparse_lines(chunk[first + 1 : last], number + 1):
                yield line_number, [raw if len(raw) <= max_line else None], True
        elif b"\n" not in lines and not careful[0]:  # the common case: no blank line
            yield number, lines, True
        else:
            for line_number, raw in enumerate(lines, number):
                if raw is None or not raw.isspace():
                    yield line_number, [raw], True
        number += len(lines)
    if dropping:
        yield number, [None], False
    elif pieces:
        last_line = b"".join(pieces)
        pieces.clear()
        if last_line and not last_line.isspace():
            yield number, [_dense(last_line) if len(last_line) <= max_line else None], False


class DenseLine(bytes):
    """A line (or member) holding more than :data:`MAX_LINE_VALUES` JSON values, in place of its
    text: a bad line, never parsed. ``values``: at least how many it holds."""

    values: int


def count_values(data: bytes, limit: int = MAX_LINE_VALUES) -> int:
    """At least how many JSON values ``data`` holds once parsed when that is more than ``limit``,
    else a number at most ``limit``: first an upper bound counted in C (every ``,``, ``[`` and
    ``{``), then, only when that is over, the same count with the strings' text left out (a long
    text full of commas is one value)."""
    count = data.count(b",") + data.count(b"[") + data.count(b"{")
    if count <= limit:
        return count
    bare = _STRING.sub(b'""', data)
    return bare.count(b",") + bare.count(b"[") + bare.count(b"{")


def _dense(raw: Any) -> Any:
    """``raw``, or a :class:`DenseLine` when it holds more than :data:`MAX_LINE_VALUES` values."""
    if raw is None or len(raw) <= MAX_LINE_VALUES:
        return raw
    values = count_values(raw)
    if values <= MAX_LINE_VALUES:
        return raw
    dense = DenseLine()
    dense.values = values
    return dense


def _sparse_lines(block: bytes, number: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a block that is mostly newlines, skipping each blank run at once."""
    pos = 0
    while pos < len(block):
        blank = _BLANK.match(block, pos)
        if blank is not None:
            number += block.count(b"\n", pos, blank.end())
            pos = blank.end()
            if pos >= len(block):
                return
        newline = block.find(b"\n", pos)
        end = len(block) if newline < 0 else newline
        yield number, block[pos:end]
        number += 1
        pos = end + 1


def _read(stream: Readable, path: str, line: int) -> bytes:
    try:
        return stream.read(_CHUNK)
    except OSError as exc:
        raise SessionFormatError(path, line, f"read failed ({exc.strerror or exc})") from None
    except (zipfile.BadZipFile, EOFError, zlib.error, ValueError, NotImplementedError, RuntimeError) as exc:
        raise SessionFormatError(path, line, f"corrupt compressed data ({exc})") from None


_BLANKS_PARSED = 64  # lines of white space found by a failed parse before they are looked for
_UNDECIDED: Any = object()  # the file's version is told from its first entry


def _entries(
    opened: AbstractContextManager[tuple[Readable, str]],
    issues: list[ReadIssue] | None,
    strict: bool,
    max_line: int,
    numbered: bool,
    check: bool = False,
) -> Iterator[Any]:
    """The entries of a stream (``(line number, entry)`` pairs when ``numbered``), read as
    :func:`iter_lines` says; the stream is opened by ``opened`` when the first is asked for.
    ``check``: a file of ours (told from its first entry, :func:`_ours`) has each entry checked
    (:func:`.checks.check_entry`), a wrong type a bad line."""
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    upgrade: Upgrade | None = _UNDECIDED
    checked: Any = _UNDECIDED if check else False
    careful, blanks = [False], 0
    with opened as (stream, path):
        for base, lines, ended in _blocks(stream, path, max_line, careful):
            rest = iter(lines)
            for raw in rest:
                entry: dict[str, Any] | None  # (a JSON value: the type is checked just below)
                try:
                    entry = loads(raw)  # type: ignore[arg-type]
                except decode_error:
                    entry = None
                if type(entry) is not dict:  # a bad line (or blank, or with a BOM): rarely
                    if raw is not None and raw.isspace():
                        blanks += 1  # (a failed parse each: after a few, they are left out first)
                        careful[0] = blanks > _BLANKS_PARSED
                        continue
                    number = base + len(lines) - 1 - length_hint(rest)
                    entry = _bad_line(raw, path, number, issues, strict, not ended, max_line)
                    if entry is None:
                        continue
                if upgrade is not None:  # a 1.2 or 1.3 file read as 1.1 (see .upgrade)
                    if upgrade is _UNDECIDED:
                        upgrade = Upgrade(entry) if compact_version(entry) else None
                    elif not upgrade.step(entry):
                        upgrade = None
                if checked:
                    if checked is _UNDECIDED:
                        checked = _ours(entry)
                    if checked:
                        try:
                            entry = check_entry(entry)
                        except BadEntry as exc:
                            number = base + len(lines) - 1 - length_hint(rest)
                            if issues is None or strict:
                                raise SessionFormatError(path, number, str(exc)) from None
                            issues.append(ReadIssue(path, number, f"{exc}; skipped"))
                            continue
                if numbered:
                    yield base + len(lines) - 1 - length_hint(rest), entry
                else:
                    yield entry


def _ours(first: dict[str, Any]) -> bool:
    """Whether a file is of our format, from its first entry: any but DevDuck's events
    (``event_type``) and DM-Code-Agent's (``event``), which have no ``type``."""
    return "type" in first or ("event_type" not in first and "event" not in first)


def _bad_line(
    raw: bytes | None,
    path: str,
    number: int,
    issues: list[ReadIssue] | None,
    strict: bool,
    torn_possible: bool,
    max_line: int,
) -> dict[str, Any] | None:
    """A line that is not a JSON object as it stands: ``None`` for a blank line or a bad one
    skipped (noted in ``issues``), the entry of a first line after its byte-order mark; else the
    :class:`SessionFormatError` naming file and line."""
    torn = False
    if raw is None:
        reason = f"line longer than {max_line} bytes"
    elif raw.__class__ is DenseLine:
        reason = f"a line of about {raw.values} JSON values, more than the {MAX_LINE_VALUES} read"  # type: ignore[union-attr]
    elif not raw or raw.isspace():
        return None
    else:
        if raw[-1:] == b"\n":
            raw = raw[:-1]
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        entry: dict[str, Any] | None  # (a JSON value: the type is checked below)
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            torn = torn_possible
            reason = "torn last line (the writer stopped mid-line); ignored" if torn else _not_json(exc)
        else:
            if isinstance(entry, dict):
                return entry
            reason = f"expected a JSON object, got {type(entry).__name__}"
    if torn or (issues is not None and not strict):
        if issues is not None:
            issues.append(ReadIssue(path, number, reason))
        return None
    raise SessionFormatError(path, number, reason)


class LineReader:
    """The entries of one file's lines handed over one at a time, as :func:`iter_lines` reads them
    (parsed; a 1.2 or later file upgraded from its root line on): for a reader that takes the lines
    as the file grows, or only some of them (the root line first, then any, in file order)."""

    def __init__(self) -> None:
        self._upgrade: Upgrade | None = _UNDECIDED

    def entry(self, raw: bytes) -> dict[str, Any] | None:
        """The entry of a line (without its newline); ``None`` when it is not a JSON object (or
        holds more than :data:`MAX_LINE_VALUES` values)."""
        if _dense(raw) is not raw:
            return None
        entry: dict[str, Any] | None  # (a JSON value: the type is checked below)
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if type(entry) is not dict:
            return None
        upgrade = self._upgrade
        if upgrade is not None:  # (as _entries does)
            if upgrade is _UNDECIDED:
                self._upgrade = Upgrade(entry) if compact_version(entry) else None
            elif not upgrade.step(entry):
                self._upgrade = None
        return entry


def iter_lines(
    stream: Readable,
    path: str,
    *,
    issues: list[ReadIssue] | None = None,
    strict: bool = False,
    max_line: int = MAX_LINE_BYTES,
    check: bool = False,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, entry)`` from a JSONL stream, one line in memory at a time.

    A last line that does not parse and has no newline (the process died mid-write) is tolerated
    and reported in ``issues``. A bad line elsewhere (not JSON, not UTF-8, not an object, longer
    than ``max_line``) raises :class:`SessionFormatError` naming file and line, unless ``strict``
    is false and ``issues`` is given, in which case it is skipped and reported. Blank lines are
    skipped; a byte-order mark before the first line is ignored.

    A file of format 1.2 or 1.3 (told from its root entry) is read as 1.1 entries
    (:mod:`.upgrade`); older files and other formats' lines are yielded as they are. ``check``:
    the entries of a file of ours are checked (:mod:`.checks`; :func:`iter_entries` checks them),
    a wrong type a bad line.
    """
    return _entries(nullcontext((stream, path)), issues, strict, max_line, True, check)


def _not_json(exc: orjson.JSONDecodeError) -> str:
    text = str(exc)
    if "UTF-8" in text:
        return f"not UTF-8 text ({text})"
    return f"not JSON ({text})"


def is_session_entry(entry: dict[str, Any]) -> bool:
    return "id" in entry and "type" in entry


# --- files and ZIPs -------------------------------------------------------------------------------

_ZIP_ERRORS = (
    zipfile.BadZipFile,
    EOFError,
    zlib.error,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OSError,
)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a regular file for reading (unbuffered). Anything else — a directory, a FIFO, a
    device such as ``/dev/zero`` (also behind a symlink) — is refused from ``stat`` before it is
    opened, and again from ``fstat`` after (the open never blocks)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such session file") from None
    except OSError as exc:
        raise SessionFormatError(path, None, f"cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise SessionFormatError(path, None, f"{_kind(mode)}, not a session file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such session file") from None
    except OSError as exc:
        raise SessionFormatError(path, None, f"cannot read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SessionFormatError(path, None, f"{_kind(mode)}, not a session file")
    os.set_blocking(fd, True)
    return open(fd, "rb", buffering=0)


class SessionArchive:
    """A session ZIP (ours or DevDuck's) whose members are checked before they are read."""

    def __init__(self, path: Path, stream: IO[bytes]):
        self.path = path
        self.size = os.fstat(stream.fileno()).st_size
        try:
            self.zip = zipfile.ZipFile(stream)
        except _ZIP_ERRORS as exc:
            raise SessionFormatError(path, None, f"truncated or corrupt ZIP ({exc})") from None

    def close(self) -> None:
        self.zip.close()

    def names(self) -> list[str]:
        return self.zip.namelist()

    def member(self, name: str, cap: int) -> zipfile.ZipInfo | None:
        """The member called ``name`` if there is one and it may be read; refused (with a
        :class:`SessionFormatError`) when there are several, or it is encrypted, compressed with
        an unknown method, larger than ``cap``, or a bomb."""
        infos = [info for info in self.zip.infolist() if info.filename == name]
        if not infos:
            return None
        where = f"{self.path}!{name}"
        if len(infos) > 1:
            raise SessionFormatError(self.path, None, f"ZIP has {len(infos)} members named {name}")
        info = infos[0]
        if info.flag_bits & 0x1:
            raise SessionFormatError(where, None, "encrypted ZIP member (not supported)")
        if info.compress_type not in _COMPRESSIONS:
            raise SessionFormatError(where, None, f"unsupported compression method {info.compress_type}")
        if info.header_offset + info.compress_size > self.size:
            raise SessionFormatError(
                where, None, f"declares {info.compress_size} compressed bytes, more than the file holds"
            )
        if info.file_size > cap:
            raise SessionFormatError(
                where, None, f"member of {info.file_size} bytes, more than the {cap} read", too_large=True
            )
        if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise SessionFormatError(
                where,
                None,
                f"inflates {info.compress_size} bytes to {info.file_size} "
                f"(more than {MAX_RATIO}x: a ZIP bomb?); refused",
            )
        return info

    @contextmanager
    def open_member(self, name: str, cap: int) -> Generator[IO[bytes], None, None]:
        info = self.member(name, cap)
        if info is None:
            raise SessionFormatError(self.path, None, f"ZIP has no {name}")
        try:
            member = self.zip.open(info)
        except _ZIP_ERRORS as exc:
            raise SessionFormatError(f"{self.path}!{name}", None, f"corrupt ZIP member ({exc})") from None
        with member:
            yield member  # type: ignore[misc]

    def read_json(self, name: str, cap: int = MAX_JSON_MEMBER_BYTES) -> Any:
        """A JSON member, read whole under ``cap``; ``None`` when the ZIP has no such member."""
        if self.member(name, cap) is None:
            return None
        where = f"{self.path}!{name}"
        with self.open_member(name, cap) as member:
            try:
                data = member.read(cap + 1)
            except _ZIP_ERRORS as exc:
                raise SessionFormatError(where, None, f"corrupt ZIP member ({exc})") from None
        return _capped_json(data, cap, where)


def _capped_json(data: bytes, cap: int, where: str | Path) -> Any:
    """A JSON member's bytes (read as ``cap + 1`` at most) as a value, or the error naming it."""
    if len(data) > cap:
        raise SessionFormatError(where, None, f"more than {cap} bytes", too_large=True)
    if len(data) > MAX_LINE_VALUES and (values := count_values(data)) > MAX_LINE_VALUES:
        raise SessionFormatError(
            where, None, f"about {values} JSON values, more than the {MAX_LINE_VALUES} read", too_large=True
        )
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SessionFormatError(where, None, _not_json(exc)) from None


class ExtractedArchive:
    """A session ZIP unpacked into a directory: the same members, as files, read under the same caps."""

    def __init__(self, path: Path):
        self.path = path

    def close(self) -> None:
        pass

    def names(self) -> list[str]:
        return sorted(p.name for p in self.path.iterdir())

    def read_json(self, name: str, cap: int = MAX_JSON_MEMBER_BYTES) -> Any:
        member = self.path / name
        if not member.exists():
            return None
        with open_regular(member) as stream:
            try:
                data = stream.read(cap + 1)
            except OSError as exc:
                raise SessionFormatError(member, None, f"cannot read ({exc.strerror or exc})") from None
        return _capped_json(data, cap, member)


@dataclass
class Source:
    """An opened session file: its event lines (``stream``, named ``name`` in messages) and,
    for a ZIP, the archive with its other members."""

    path: Path
    stream: IO[bytes]
    name: str
    archive: SessionArchive | ExtractedArchive | None


@contextmanager
def open_source(path: str | os.PathLike[str]) -> Generator[Source, None, None]:
    """Open a JSONL file, a session ZIP (told apart by their first bytes) or a directory holding an
    unpacked session ZIP (its ``events.jsonl`` and the other members beside it)."""
    path = Path(path)
    if path.is_dir() and (path / ZIP_EVENTS).exists():
        with open_regular(path / ZIP_EVENTS) as stream:
            yield Source(path, stream, str(path / ZIP_EVENTS), ExtractedArchive(path))
        return
    raw = open_regular(path)
    try:
        try:
            head = raw.read(4)
            raw.seek(0)
        except OSError as exc:
            raise SessionFormatError(path, None, f"cannot read ({exc.strerror or exc})") from None
        if head not in _ZIP_MAGIC:
            yield Source(path, raw, str(path), None)
            return
        archive = SessionArchive(path, raw)
        try:
            with archive.open_member(ZIP_EVENTS, MAX_EVENTS_BYTES) as member:
                yield Source(path, member, f"{path}!{ZIP_EVENTS}", archive)
        finally:
            archive.close()
    finally:
        raw.close()


@contextmanager
def open_events(path: str | os.PathLike[str]) -> Generator[tuple[IO[bytes], str], None, None]:
    """The session tree stream of a JSONL file or a session ZIP, with a name for messages."""
    with open_source(path) as source:
        yield source.stream, source.name


def iter_entries(
    path: str | os.PathLike[str], issues: list[ReadIssue] | None = None, *, strict: bool = False
) -> Iterator[dict[str, Any]]:
    """Stream the entries of a session file or ZIP, one line in memory at a time (the file is
    opened when the first entry is asked for).

    A torn last line is skipped (and noted in ``issues``); any other bad line (an entry of ours
    whose fields have the wrong type: :mod:`.checks`) raises :class:`SessionFormatError` naming
    the file and line, unless ``issues`` is given and ``strict`` is false, then it is skipped and
    noted.
    """
    return _entries(open_events(path), issues, strict, MAX_LINE_BYTES, False, True)


def child_files(
    directory: Path, session_id: str, own: Path, tier: str, issues: list[ReadIssue] | None = None
) -> list[Path]:
    """A session's file of one tier followed by its child processes' files of that tier (sorted):
    ``<session>.p<pid>[.checkpoint].jsonl`` beside it. A name that is not a regular file (a FIFO,
    a directory, a dangling symlink) is left out, noted in ``issues``: one bad child never makes
    its parent session unreadable (nor blocks on a FIFO)."""
    children: list[Path] = []
    checkpoint_tail = CHECKPOINT_SUFFIX + JSONL_SUFFIX
    for path in directory.glob(f"{session_id}.p*{JSONL_SUFFIX}"):
        is_checkpoint = path.name.endswith(checkpoint_tail)
        if path != own and is_checkpoint == (tier == "checkpoint"):
            children.append(path)
    return [own, *regular_files(sorted(children), issues)]


def regular_files(paths: list[Path], issues: list[ReadIssue] | None = None) -> list[Path]:
    """The ``paths`` that are regular files (through symlinks); the others are left out, each
    noted in ``issues`` (``<path>: a FIFO, not a session file; skipped``)."""
    out: list[Path] = []
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            reason = (
                "no such file (a dangling symlink?)"
                if isinstance(exc, FileNotFoundError)
                else (f"cannot read ({exc.strerror or exc})")
            )
        else:
            if stat.S_ISREG(mode):
                out.append(path)
                continue
            reason = f"{_kind(mode)}, not a session file"
        if issues is not None:
            issues.append(ReadIssue(str(path), None, f"{reason}; skipped"))
    return out


def iter_files(paths: list[Path], issues: list[ReadIssue] | None = None) -> Iterator[dict[str, Any]]:
    """The entries of several JSONL files in turn (a session file and its child files), as they
    are written: unchecked (the recorder's ZIP keeps every line; its ``events.jsonl`` is checked
    when read)."""
    for path in paths:
        yield from _entries(_regular(path), [] if issues is None else issues, False, MAX_LINE_BYTES, False)


@contextmanager
def _regular(path: Path) -> Generator[tuple[IO[bytes], str], None, None]:
    with open_regular(path) as stream:
        yield stream, str(path)
