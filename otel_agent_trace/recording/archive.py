"""The session ZIP: written at stop, atomically, never over another file.

Members: ``events.jsonl`` (the session tree, the parent's file then its child processes'),
``snapshots.json`` (DevDuck's shape), ``metadata.json`` and ``resume.json`` (the latest snapshot's
state as JSON; no pickle is ever written).
"""

from __future__ import annotations

import _thread
import mmap
import os
import queue
import re
import secrets
import sys
import tempfile
import time
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io
from otel_agent_trace.session_format.reader import MAX_LINE_BYTES, LineReader, open_regular
from otel_agent_trace.session_format.views import MESSAGE_ENTRY_KEYS, MESSAGE_OWN_KEYS

if TYPE_CHECKING:
    from .recorder import SessionRecorder
    from .writer import TierWriter

# ``fmt`` loads its modules on first use; an export's are loaded with this module (at session
# start: lifecycle.start_session), not at exit, where defining their dataclasses would make an
# interrupted CPython exit with status 1 instead of dying of SIGINT.
_USES = (fmt.child_files, fmt.iter_lines, fmt.snapshot_view, fmt.message_view)

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


def zip_name(session_id: str, tier: str) -> str:
    """The file name of a tier's session ZIP."""
    return session_id + (fmt.CHECKPOINT_SUFFIX if tier == "checkpoint" else "") + fmt.ZIP_SUFFIX


def temporary(directory: Path, name: str) -> Path:
    """A new temporary file's path for the ZIP ``name``, known to :func:`discard_unfinished`
    before it exists (no moment when it exists and is not known)."""
    tmp = directory / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    _unfinished.add(tmp)
    return tmp


def export_zip(recorder: SessionRecorder, writer: TierWriter) -> Path:
    directory = writer.path.parent
    tier = writer.tier
    final = directory / zip_name(recorder.session_id, tier)
    paths = fmt.child_files(directory, recorder.session_id, writer.path, tier)
    stamp = recorder.env.localtime(recorder.stopped_ns / 1e9)  # the members' dates: when it stopped
    from .zip_ahead import take  # (loaded with this module's user, lifecycle.start_session)

    ahead = take(writer)
    with own_io():
        if ahead is not None:  # its events.jsonl copied while it ran: the rest of the ZIP now
            try:
                return _finish_ahead(recorder, writer, ahead, paths, stamp, final)
            except (_Doubt, FileNotFoundError):  # the file is not as its writer says, or the
                pass  # copy was removed (by hand): the files are copied and scanned again
            finally:
                ahead.close(remove=True)
        tmp = temporary(directory, final.name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if tier == "checkpoint" else 0o644)
            with open(fd, "wb", closefd=True) as raw, zipfile.ZipFile(raw, "w") as zf:
                size = sum(_size(path) for path in paths)
                with zf.open(_member(fmt.ZIP_EVENTS, stamp, size), "w", force_zip64=True) as member:
                    reader = _ReadAhead(paths, member.write)
                    try:
                        found = _snapshots(paths, reader, _Written.of(writer, writer.path))
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
            _unfinished.discard(tmp)
    return final


def _finish_ahead(
    recorder: SessionRecorder,
    writer: TierWriter,
    ahead: Any,
    paths: list[Path],
    stamp: time.struct_time,
    final: Path,
) -> Path:
    """The ZIP of a session whose ``events.jsonl`` was copied while it ran (``recording.zip_ahead``):
    what is left of its own file and its child processes' files copied, its snapshot lines read
    where its writer wrote them, the other members and the central directory written after."""
    written = _Written.of(writer, writer.path)
    if written is None or ahead.copied > written.written:
        raise _Doubt
    ahead.copy(written.written)
    # Its snapshot lines: those written since the copy thread last looked (all of them when it
    # took none, or its doubt dropped them); a doubt here and the export copies it all.
    views = ahead.take_views()
    try:
        if views is not None:
            try:
                views.advance(ahead.src, written.offsets, written.lines, written.written, final=True)
            except (_Doubt, OSError):
                views.close()
                views = None
        if views is None:
            views = _AheadViews(paths[0])
            views.advance(ahead.src, written.offsets, written.lines, written.written, final=True)
        reader = _ReadAhead(paths[1:], ahead.write)
        try:  # the session's own file is done: its child processes' files are scanned
            found = _scan(paths, reader, written, None, views)
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
        with zipfile.ZipFile(raw, "w") as zf:  # its central directory starts after the member
            zf.filelist.append(info)
            zf.NameToInfo[info.filename] = info
            try:
                _small_members(zf, recorder, paths, stamp, writer.tier, found, size)
            finally:
                found.snapshots.close()
    os.link(ahead.tmp, final)  # fails rather than replace an existing file
    return final


def _small_members(
    zf: zipfile.ZipFile,
    recorder: SessionRecorder,
    paths: list[Path],
    stamp: time.struct_time,
    tier: str,
    found: _Found,
    size: int,
) -> None:
    """``snapshots.json``, ``metadata.json`` and ``resume.json`` (``size``: the session's)."""
    snapshots = found.snapshots
    metadata = _metadata(recorder, paths, stamp, tier, found.total, snapshots.count)
    resume = _resume_state(found, tier)
    length = snapshots.finish()
    info = _member(fmt.ZIP_SNAPSHOTS, stamp, max(size, length))
    with zf.open(info, "w", force_zip64=length >= zipfile.ZIP64_LIMIT) as member:
        snapshots.copy(member.write)
    for member_name, value in ((fmt.ZIP_METADATA, metadata), (fmt.ZIP_RESUME, resume)):
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        zf.writestr(_member(member_name, stamp, max(size, len(data))), data)


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
        "snapshots_format": fmt.ZIP_SNAPSHOTS_FORMAT,
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
# the speed of the disk. A session (its files together) up to STORE_ABOVE bytes has its members
# deflated at level 1 (a small session's ZIP stays small, in well under a second); a bigger one has
# them all stored (and any member over STORE_ABOVE), so a session of several GB is written within a
# killed pod's grace period (docs/benchmarks/zip.md): its ZIP is about the size of its files, and
# snapshots.json, a tenth of it or more, is not deflated by the one thread left at exit. A stored
# member is never taken for a bomb by the reader (its size is its compressed size).

STORE_ABOVE = 32 << 20
FAST_LEVEL = 1


def _member(name: str, stamp: time.struct_time, size: int) -> zipfile.ZipInfo:
    """A member of ``size`` bytes (or of a session of ``size``, whichever is bigger)."""
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
# The files are read once, by a thread of their own (``_ReadAhead``) that also writes each chunk
# to the ZIP member (read, CRC-32 and write release the GIL), while this thread scans the chunk:
# its lines are counted by newline, and the lines that can be snapshot entries (those holding
# "snapshot" as a JSON string) are read by ``fmt.iter_lines`` after the file's root entry, as the
# whole file would be (a format 1.2 file is upgraded alike). For the session's own file, what its
# writer knows replaces the count and the search (``_Written``, ``_KnownScan``).
#
# snapshots.json (format 2) names each snapshot's messages by entry id, by reference to the
# snapshot before (``fmt.snapshot_reference_view``): no message is looked for or parsed for it, and
# it grows with the session, not with snapshots × messages (DevDuck's shape, format 1, repeats
# every message of every snapshot: for a long conversation many times the session itself). Only
# the last snapshot's messages are read, for resume.json (``_messages_of_last``).

_CHUNK = 4 << 20  # below MAX_LINE_BYTES: a line longer than the reader reads is never within one
_AHEAD = 4  # chunks read ahead of the scan
_SNAPSHOT_TOKEN = b'"' + fmt.SNAPSHOT.encode() + b'"'
_LONGEST = MAX_LINE_BYTES + 1  # a line of more bytes (its newline counted) is dropped by the reader
# A message line's bookkeeping as the writer writes it, every value plain (strings of printable
# ASCII without quote or backslash, a 64-bit integer ts): the rest of the line (group 1), from the
# quote of its next key, is the message itself (see _view).
_TEXT = rb'"[\x20\x21\x23-\x5b\x5d-\x7e]*"'
_BOOKKEEPING = re.compile(
    rb'\{"id":'
    + _TEXT
    + rb',"parent_id":'
    + _TEXT
    + rb',"type":"'
    + fmt.MESSAGE.encode()
    + rb'","layer":'
    + _TEXT
    + rb',"ts":(?:0|[1-9][0-9]{0,18}),"digest":'
    + _TEXT
    + rb',(?:"span_id":'
    + _TEXT
    + rb',)?("[^\n]*)'
)
_NOT_VIEWED = MESSAGE_ENTRY_KEYS | {MESSAGE_OWN_KEYS}
_Region = tuple[bytes, int, int]  # buf, start, end: buf[start:end] holds whole lines
# While a thread reads ahead, the interpreter's switch interval is at most this: the thread wants
# the GIL back after each read, CRC-32 and write (each releases it), and a thread waiting for it
# waits a whole interval (5 ms by default) while this one runs Python code: ~1 s over 250 MB, which
# would make the copy, not the scan, set the pace on two cores. Not much lower: on one core each
# switch is paid for. (Restored when the last export under way ends.)
_SWITCH_S = 0.001
_switching = [0, 0.0]  # exports reading ahead, the interval before the first
_switching_lock = _thread.allocate_lock()


def _switch_faster(on: bool) -> None:
    with _switching_lock:
        if on:
            if not _switching[0]:
                _switching[1] = sys.getswitchinterval()
                sys.setswitchinterval(min(_switching[1], _SWITCH_S))
            _switching[0] += 1
        else:
            _switching[0] -= 1
            if not _switching[0]:
                sys.setswitchinterval(_switching[1])


class _ReadAhead:
    """The chunks of ``paths``, read in turn by a thread of its own a few chunks ahead of the
    caller: :meth:`chunks` gives those of the next file. Each chunk is handed to ``sink`` (the ZIP
    member's ``write``) after it is queued for the caller, so the copy runs while the caller scans.
    Where no thread can be started (at interpreter shutdown), the caller reads and copies itself."""

    def __init__(self, paths: list[Path], sink: Callable[[bytes], Any] | None):
        self._paths = paths
        self._sink = sink
        self._queue: queue.Queue[bytes | None] = queue.Queue(_AHEAD)
        self._stopping = False
        self._error: BaseException | None = None
        self._done = _thread.allocate_lock()
        self._done.acquire()
        self._next = 0  # the next file to give (without a thread)
        try:
            _thread.start_new_thread(self._run, ())
            self.threaded = True
        except RuntimeError:  # interpreter shutdown: no new thread
            self._done.release()
            self.threaded = False
        else:
            _switch_faster(True)

    def _put(self, item: bytes | None) -> bool:
        while not self._stopping:
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            with own_io():
                for path in self._paths:
                    for chunk in _file_chunks(path, self._sink):
                        if not self._put(chunk):
                            return
                    if not self._put(b""):
                        return
        except BaseException as exc:  # handed to the caller
            self._error = exc
        finally:
            self._put(None)
            self._done.release()

    def chunks(self) -> Iterator[bytes]:
        """The next file's chunks."""
        if not self.threaded:
            path = self._paths[self._next]
            self._next += 1
            yield from _file_chunks(path, self._sink)
            return
        while True:
            item = self._queue.get()
            if not item:
                if item is None:  # the thread ended early: by an error
                    self._queue.put(None)
                    self._raise()
                    raise RuntimeError("the read ahead ended early")  # pragma: no cover
                return
            yield item

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Wait for the thread (at most until the chunk it copies is written); raise its error."""
        if self.threaded:
            self.threaded = False
            self._stopping = True
            while not self._done.acquire(timeout=0.05):
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    pass
            self._done.release()
            _switch_faster(False)
        self._raise()


def _file_chunks(path: Path, sink: Callable[[bytes], Any] | None) -> Iterator[bytes]:
    with open_regular(path) as src:
        while chunk := src.read(_CHUNK):
            yield chunk
            if sink is not None:
                sink(chunk)


def _regions(chunks: Iterable[bytes], at: list[int] | None = None) -> Iterator[_Region]:
    """``(buf, start, end)`` in file order: ``buf[start:end]`` holds whole lines, each with its
    newline (a chunk's own, in place; a line spread over chunks, joined). A line longer than the
    reader reads is given as a blank line (counted, never parsed; its bytes are not kept); a last
    line without a newline comes last, with one added, if it parses (else it is torn: left out).
    ``at``, when given, is set before each region is given to the file offsets of the bytes it
    stands for (``[start, end)``: for a line too long, those of the whole line)."""
    pieces: list[bytes] = []  # the start of a line not yet ended
    pending = 0  # its length
    dropping = False  # within a line too long: its bytes are dropped up to its newline
    offset = 0  # the file offset of the chunk
    line_at = 0  # the file offset of the line not yet ended
    for chunk in chunks:
        first = chunk.find(b"\n")
        if first < 0:
            if not dropping:
                if not pieces:
                    line_at = offset
                pending += len(chunk)
                pieces.append(chunk)
                if pending > _LONGEST:
                    pieces, pending, dropping = [], 0, True
            offset += len(chunk)
            continue
        start = 0
        if pieces or dropping:
            if at is not None:
                at[0], at[1] = line_at, offset + first + 1
            if dropping or pending + first + 1 > _LONGEST:
                yield b"\n", 0, 1
            else:
                pieces.append(chunk[: first + 1])
                line = b"".join(pieces)
                yield line, 0, len(line)
            pieces, pending, dropping = [], 0, False
            start = first + 1
        end = chunk.rfind(b"\n") + 1
        if start < end:
            if at is not None:
                at[0], at[1] = offset + start, offset + end
            yield chunk, start, end
        if end < len(chunk):
            pieces, pending = [chunk[end:]], len(chunk) - end
            line_at = offset + end
        offset += len(chunk)
    if pieces:
        last = b"".join(pieces)
        if last.strip():
            try:  # a line cut short by a crash is left out, as the reader leaves it out
                orjson.loads(last)
            except orjson.JSONDecodeError:
                return
            if at is not None:
                at[0], at[1] = line_at, line_at + len(last)
            yield last + b"\n", 0, len(last) + 1


class _Feed:
    """A stream for ``fmt.iter_lines`` of the lines an iterator gives (each with its newline)."""

    def __init__(self, lines: Iterator[bytes]):
        self._lines = lines

    def read(self, size: int = -1) -> bytes:
        return next(self._lines, b"")


class _Scan:
    """The copy pass over one file: its lines counted, its candidate snapshot lines given to
    ``fmt.iter_lines`` (:meth:`lines`: the root line first), each with its entry number."""

    def __init__(self, path: Path, chunks: Iterable[bytes]):
        self.path = path
        self.entries = 0
        self._chunks = chunks
        # (candidate number, entry number in the file) of each candidate line given
        self.found: deque[tuple[int, int]] = deque()

    def lines(self) -> Iterator[bytes]:
        count = 0
        number = 0
        token = _SNAPSHOT_TOKEN
        root = True
        for buf, start, end in _regions(self._chunks):
            pos = start
            if root:
                root = False
                pos = buf.find(b"\n", start, end) + 1
                count = 1
                yield buf[start:pos]
            counted = pos
            at = buf.find(token, pos, end)
            while at >= 0:
                line = buf.rfind(b"\n", pos, at) + 1 or pos
                stop = buf.find(b"\n", at, end) + 1
                count += buf.count(b"\n", counted, line)
                counted = line
                self.found.append((number, count))
                number += 1
                yield buf[line:stop]
                at = buf.find(token, stop, end)
            count += buf.count(b"\n", counted, end)
        self.entries = count

    def where(self, number: int) -> int:
        """The entry number (in the file) of candidate ``number`` (in the order given)."""
        while self.found[0][0] < number:
            self.found.popleft()
        return self.found.popleft()[1]


class _Doubt(Exception):
    """The writer's own file is not as its writer says: it is scanned as any other file."""


class _Written:
    """What the writer of the session's own file knows of it (see ``TierWriter``): the lines it
    wrote, and where its snapshot entries' lines are. ``None`` when there is any doubt: a write
    failed or was finished by more than one call, the offsets are missing, or the file's size is
    not what the writer wrote (a line added by hand, a torn one, another writer)."""

    @staticmethod
    def of(writer: Any, path: Path) -> _Written | None:
        try:  # (a writer without this knowledge, e.g. one that has only the path: AttributeError)
            if writer.failed or writer.partial:
                return None
            offsets = writer.snapshot_offsets
            lines = writer.snapshot_lines
            entries = writer.entries
            written = writer.written
            if (
                type(entries) is not int
                or type(written) is not int
                or len(offsets) != len(lines)
                or _size(path) != written
            ):
                return None
            return _Written(list(offsets), list(lines), entries, written)
        except (AttributeError, TypeError):
            return None

    def __init__(self, offsets: list[int], lines: list[int], entries: int, written: int):
        self.offsets = offsets
        self.lines = lines
        self.entries = entries
        self.written = written


class _KnownScan(_Scan):
    """:class:`_Scan` of the writer's own file: no line counted, no token looked for; the snapshot
    lines taken where the writer wrote them (``_Written``), each checked to start a line (else, or
    if the file read is not the file written, :class:`_Doubt`)."""

    def __init__(self, path: Path, chunks: Iterable[bytes], written: _Written):
        super().__init__(path, chunks)
        self._written = written

    def lines(self) -> Iterator[bytes]:
        offsets, numbers = self._written.offsets, self._written.lines
        count = len(offsets)
        k = 0
        number = 0
        at = [0, 0]
        low = high = 0
        root = True
        for buf, start, end in _regions(self._chunks, at):
            low, high = at
            pos = start
            if high - low != end - start:  # a line too long (dropped by the reader) or torn
                if end - start != 1 or high - low <= _LONGEST:
                    raise _Doubt
                while k < count and offsets[k] < high:
                    if offsets[k] != low:
                        raise _Doubt
                    k += 1
                if root:  # the reader's line 1 all the same (as _Scan gives it)
                    root = False
                    yield b"\n"
                continue
            if root:
                root = False
                pos = buf.find(b"\n", start, end) + 1
                yield buf[start:pos]
            while k < count and offsets[k] < high:
                line = start + offsets[k] - low
                if line < pos or (line and buf[line - 1] != 10):
                    raise _Doubt
                stop = buf.find(b"\n", line, end) + 1
                self.found.append((number, numbers[k]))
                number += 1
                k += 1
                yield buf[line:stop]
        if k < count or high != self._written.written:
            raise _Doubt
        self.entries = self._written.entries

    def where(self, number: int) -> int:
        if not self.found or self.found[0][0] != number:
            raise _Doubt  # a line the reader skipped: not what the writer wrote
        return self.found.popleft()[1]


def _messages_of_last(
    paths: list[Path], in_file: int, ids: list[str], written: _Written | None
) -> list[dict[str, Any]]:
    """The views of the messages the last snapshot names (``ids``; the snapshot is in
    ``paths[in_file]``), for ``resume.json``: as ``fmt.build_snapshots`` shows them (each id's last
    message entry in the session). In the writer's own file (``written``: it never repeats an id)
    each is looked for backwards from the one after it, one ``rfind`` each over the file mapped
    in memory: one sweep back at most, however long the conversation. Any id not found so, or
    in any other file, is read by the reader from every file."""
    wanted = list(dict.fromkeys(ids))
    views: dict[str, dict[str, Any]] = {}
    if written is not None and in_file == 0 and wanted:
        try:
            with open_regular(paths[0]) as stream, mmap.mmap(stream.fileno(), 0, prot=mmap.PROT_READ) as mm:
                high = written.offsets[-1] if written.offsets else len(mm)
                for entry_id in reversed(wanted):
                    key = b'\n{"id":"' + entry_id.encode(errors="surrogatepass") + b'","parent_id":"'
                    at = mm.rfind(key, 0, high)
                    if at < 0:
                        at = mm.rfind(key, high)  # (named out of the order it was written in)
                    if at < 0:
                        continue
                    viewed = _view(mm[at + 1 : mm.find(b"\n", at + 1)])
                    if viewed is not None and viewed[0] == entry_id:
                        views[entry_id] = viewed[1]
                        high = min(high, at)
        except (OSError, ValueError):  # (an empty file cannot be mapped)
            views = {}
    left = {i for i in wanted if i not in views}
    if left:
        found: dict[str, Any] = {}
        for entry in fmt.iter_files(paths, []):
            if entry.get("type") == fmt.MESSAGE and entry.get("id") in left:
                found[entry["id"]] = entry
        for entry_id in left:
            views[entry_id] = fmt.message_view(found.get(entry_id), entry_id)
    return [views[i] for i in ids]


def _view(line: bytes) -> tuple[str, dict[str, Any]] | None:
    """``(id, fmt.message_view of the entry)`` for a line that parses as a message entry (as the
    reader parses it), else ``None``. A line whose bookkeeping the writer wrote (``_BOOKKEEPING``:
    plain values, valid JSON as they stand) has the rest parsed alone: that is the view when it
    holds none of the bookkeeping keys (their values would replace the ones before, or be moved)."""
    match = _BOOKKEEPING.match(line)
    if match is not None:
        try:
            view = orjson.loads(b"{" + match.group(1))
        except orjson.JSONDecodeError:
            return None  # the whole line does not parse either
        if _NOT_VIEWED.isdisjoint(view):
            return line[7 : line.index(b'"', 7)].decode(), view
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(entry) is not dict or entry.get("type") != fmt.MESSAGE:
        return None
    entry_id = entry.get("id")
    if not isinstance(entry_id, str):
        return None
    return entry_id, fmt.message_view(entry, entry_id)


def _snapshots(paths: list[Path], reader: _ReadAhead, written: _Written | None = None) -> _Found:
    """``snapshots.json``'s snapshots (format 3: :func:`fmt.snapshot_reference_view`), the snapshot
    entries, the session's entry count and the last snapshot's messages, from the scanned lines
    only (the chunks of ``paths`` given by ``reader``). ``written``: what the writer of
    ``paths[0]`` knows of it (its lines are then neither counted nor searched); if the file is not
    as it says, the files are read again (after the copy) and scanned as any others."""
    if written is not None:
        chunks = reader.chunks()
        try:
            return _scan(paths, reader, written, chunks)
        except _Doubt:
            for _ in chunks:  # the copy of the files goes on to their end
                pass
            for _ in paths[1:]:
                for _ in reader.chunks():
                    pass
        reader = _ReadAhead(paths, None)
        try:
            return _scan(paths, reader, None, None)
        finally:
            reader.close()
    return _scan(paths, reader, None, None)


_SPOOLED_IN_MEMORY = 4 << 20  # snapshots.json kept in memory up to this, then in a temporary file
_SPOOL_BLOCK = 1 << 20  # written to that file this much at a time


class _Snapshots:
    """``snapshots.json`` as the scan finds its snapshots: each view dumped as it comes (the bytes
    ``orjson.dumps(views, option=OPT_INDENT_2)`` gives for the whole list), in memory up to
    ``_SPOOLED_IN_MEMORY``, then in a temporary file beside the ZIP (private, removed from the
    directory as it is made), so the export's memory stays bounded however many snapshots the
    session holds. The latest view is kept, for ``resume.json``. Written with ``os.write`` a
    block at a time from a buffer of its own that :meth:`close` drops: a process forked meanwhile
    (zip_ahead's at-fork handler closes its copy) never writes into it, as a Python file object's
    buffer, flushed when closed, would."""

    def __init__(self, directory: Path):
        self._directory = directory
        self._memory = bytearray()
        self._fd = -1
        self._name: str | None = None  # (where an open file cannot be removed: removed at close)
        self._size = 0
        self.count = 0
        self.latest: dict[str, Any] | None = None

    def add(self, view: dict[str, Any]) -> None:
        data = orjson.dumps(view, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n  ")
        self._write((b",\n  " if self.count else b"[\n  ") + data)
        self.count += 1
        self.latest = view

    def _write(self, data: bytes) -> None:
        self._size += len(data)
        self._memory += data
        if self._fd < 0:
            if len(self._memory) <= _SPOOLED_IN_MEMORY:
                return
            self._fd, name = tempfile.mkstemp(prefix=".snapshots.", suffix=".tmp", dir=self._directory)
            try:
                os.unlink(name)
            except OSError:
                self._name = name
        if len(self._memory) >= _SPOOL_BLOCK:  # (a system call per block: each lets go of the GIL)
            self._flush()

    def _flush(self) -> None:
        pending, self._memory = self._memory, bytearray()
        view = memoryview(pending)
        while view:
            view = view[os.write(self._fd, view) :]

    def finish(self) -> int:
        """The list closed; its length in bytes."""
        self._write(b"\n]" if self.count else b"[]")
        return self._size

    def copy(self, write: Callable[[bytes], Any]) -> None:
        if self._fd < 0:
            write(bytes(self._memory))
            return
        self._flush()
        offset = 0
        while chunk := os.pread(self._fd, 1 << 20, offset):
            write(chunk)
            offset += len(chunk)

    def close(self) -> None:
        self._memory = bytearray()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._name is not None:
            try:
                os.unlink(self._name)
            except OSError:
                pass
            self._name = None


class _AheadViews:
    """``snapshots.json`` of the session's own file, made while the session runs: the copy thread
    of ``recording.zip_ahead`` takes the snapshot lines its writer wrote (``TierWriter``'s
    ``snapshot_offsets`` and ``snapshot_lines``) as the file grows, read where the writer wrote
    them in the file mapped in memory, so that the stop takes only those written since. (A session
    of an automatic snapshot at each model call has one every few KB: taken at stop, they set its
    pace, not the copy.) Any doubt (:class:`_Doubt`) and they are dropped: the stop takes them all
    again, and on a doubt of its own copies and scans the files as any others."""

    def __init__(self, path: Path):
        self.spool = _Snapshots(path.parent)
        self.ids: list[str] | None = None  # the last snapshot's message ids
        self.previous = -1  # its entry number in the file
        self.last: dict[str, Any] | None = None  # its entry
        self.taken = 0  # snapshot lines taken
        self._lines: LineReader | None = None
        self._root_end = 0  # the offset of the root line's newline

    def advance(self, fd: int, offsets: Any, numbers: Any, written: int, *, final: bool = False) -> None:
        """Take the snapshot lines ``fd`` holds whole within its first ``written`` bytes (the
        writer's count, read before its offsets: a line being written is left for later), read
        where the writer wrote them in the file mapped in memory. ``final``: all of them must be
        (the writer has stopped), else :class:`_Doubt`."""
        count = min(len(offsets), len(numbers))
        k = self.taken
        if k >= count and not final:
            return
        try:
            mapped = mmap.mmap(fd, written, prot=mmap.PROT_READ)
        except (ValueError, OSError):  # (the file is shorter than its writer wrote)
            raise _Doubt from None
        with mapped as mm:
            if self._lines is None:
                end = mm.find(b"\n", 0, _LONGEST)
                lines = LineReader()
                if end < 0 or lines.entry(mm[:end]) is None:
                    raise _Doubt  # (a root line the reader does not take as it is)
                self._lines, self._root_end = lines, end
            try:
                while k < count:
                    offset = offsets[k]
                    if offset >= written:
                        break  # not written yet
                    if offset <= self._root_end or mm[offset - 1] != 10:
                        raise _Doubt  # not where a line starts
                    stop = mm.find(b"\n", offset, offset + _LONGEST)
                    if stop < 0:
                        if offset + _LONGEST >= written:
                            break  # not written whole yet
                        k += 1  # too long: the reader drops it
                        continue
                    entry = self._lines.entry(mm[offset:stop])
                    if entry is None or entry.get("type") != fmt.SNAPSHOT:
                        raise _Doubt
                    index = numbers[k]
                    view, self.ids = fmt.snapshot_reference_view(entry, index - self.previous - 1, self.ids)
                    self.spool.add(view)
                    self.last, self.previous = entry, index
                    k += 1
            finally:
                self.taken = k
        if final and k != len(offsets):
            raise _Doubt

    def close(self) -> None:
        self.spool.close()


class _Found(NamedTuple):
    snapshots: _Snapshots  # snapshots.json's (the caller closes it)
    last: dict[str, Any] | None  # the last snapshot entry
    total: int  # the session's entries
    last_messages: list[dict[str, Any]]  # the views of the last snapshot's messages


def _scan(
    paths: list[Path],
    reader: _ReadAhead,
    written: _Written | None,
    chunks: Iterator[bytes] | None,
    ahead: _AheadViews | None = None,
) -> _Found:
    """See :func:`_snapshots`. ``ahead``: ``paths[0]``'s snapshots, all of them, taken where its
    writer wrote them (``written``): the scan goes on with the files after it (``reader`` reads
    those only)."""
    known = written
    snapshots = ahead.spool if ahead is not None else _Snapshots(paths[0].parent)
    try:
        return _scan_into(snapshots, paths, reader, written, chunks, known, ahead)
    except BaseException:
        snapshots.close()
        raise


def _scan_into(
    snapshots: _Snapshots,
    paths: list[Path],
    reader: _ReadAhead,
    written: _Written | None,
    chunks: Iterator[bytes] | None,
    known: _Written | None,
    ahead: _AheadViews | None = None,
) -> _Found:
    last: dict[str, Any] | None = None  # the last snapshot entry so far, and the file it is in
    last_file = 0
    ids: list[str] | None = None  # its message ids (the next one's are by reference to them)
    previous = -1  # its entry number in the session
    offset = 0
    done = 0  # files scanned
    if ahead is not None and known is not None:  # the first file's, made while the session ran
        last, ids, previous = ahead.last, ahead.ids, ahead.previous
        offset, done = known.entries, 1
        written = chunks = None
    for in_file, path in enumerate(paths):
        if in_file < done:
            continue
        if written is not None and chunks is not None:
            scan: _Scan = _KnownScan(path, chunks, written)
        else:
            scan = _Scan(path, reader.chunks())
        for number, entry in fmt.iter_lines(_Feed(scan.lines()), str(path), issues=[]):
            if number == 1:
                continue  # the root entry
            index = offset + scan.where(number - 2)
            if entry.get("type") == fmt.SNAPSHOT:
                view, ids = fmt.snapshot_reference_view(entry, index - previous - 1, ids)
                snapshots.add(view)
                last, last_file, previous = entry, in_file, index
            elif written is not None:
                raise _Doubt  # a line the writer wrote as a snapshot entry is not one
        if written is not None:
            if scan.found:
                raise _Doubt
            written = chunks = None  # the files after the first: child processes'
        offset += scan.entries
    messages = _messages_of_last(paths, last_file, ids or [], known) if last is not None else []
    return _Found(snapshots, last, offset, messages)


def _root_meta(path: Path) -> dict[str, Any]:
    with open(path, "rb") as stream:
        first = stream.readline()
    try:
        return orjson.loads(first).get("metadata") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return {}


def _resume_state(found: _Found, tier: str) -> dict[str, Any]:
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
