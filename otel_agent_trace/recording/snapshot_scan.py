"""``snapshots.json`` without parsing every line: the session's files read once (a thread of its
own copies each chunk into the ZIP member while this one scans it), their lines counted by
newline, the lines that can be snapshot entries read as the reader reads them, and, for the
session's own file, what its writer knows used instead of the count and the search."""

from __future__ import annotations

import _thread
import mmap
import os
import queue
import re
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io
from otel_agent_trace.session_format.reader import open_regular
from otel_agent_trace.session_format.views import MESSAGE_ENTRY_KEYS, MESSAGE_OWN_KEYS

from .snapshot_spool import LONGEST, AheadViews, Doubt, SnapshotSpool


def file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# The files are read once, by a thread of their own (``ReadAhead``) that also writes each chunk
# to the ZIP member (read, CRC-32 and write release the GIL), while this thread scans the chunk:
# its lines are counted by newline, and the lines that can be snapshot entries (those holding
# "snapshot" as a JSON string) are read by ``fmt.iter_lines`` after the file's root entry, as the
# whole file would be (a format 1.2 file is upgraded alike). For the session's own file, what its
# writer knows replaces the count and the search (``Written``, ``_KnownScan``).
#
# snapshots.json (format 2) names each snapshot's messages by entry id, by reference to the
# snapshot before (``fmt.snapshot_reference_view``): no message is looked for or parsed for it, and
# it grows with the session, not with snapshots × messages (DevDuck's shape, format 1, repeats
# every message of every snapshot: for a long conversation many times the session itself). Only
# the last snapshot's messages are read, for resume.json (``_messages_of_last``).

_CHUNK = 4 << 20  # below MAX_LINE_BYTES: a line longer than the reader reads is never within one
_AHEAD = 4  # chunks read ahead of the scan
_SNAPSHOT_TOKEN = b'"' + fmt.SNAPSHOT.encode() + b'"'
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


class ReadAhead:
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
                if pending > LONGEST:
                    pieces, pending, dropping = [], 0, True
            offset += len(chunk)
            continue
        start = 0
        if pieces or dropping:
            if at is not None:
                at[0], at[1] = line_at, offset + first + 1
            if dropping or pending + first + 1 > LONGEST:
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


class Written:
    """What the writer of the session's own file knows of it (see ``TierWriter``): the lines it
    wrote, and where its snapshot entries' lines are. ``None`` when there is any doubt: a write
    failed or was finished by more than one call, the offsets are missing, or the file's size is
    not what the writer wrote (a line added by hand, a torn one, another writer)."""

    @staticmethod
    def of(writer: Any, path: Path) -> Written | None:
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
                or file_size(path) != written
            ):
                return None
            return Written(list(offsets), list(lines), entries, written)
        except (AttributeError, TypeError):
            return None

    def __init__(self, offsets: list[int], lines: list[int], entries: int, written: int):
        self.offsets = offsets
        self.lines = lines
        self.entries = entries
        self.written = written


class _KnownScan(_Scan):
    """:class:`_Scan` of the writer's own file: no line counted, no token looked for; the snapshot
    lines taken where the writer wrote them (``Written``), each checked to start a line (else, or
    if the file read is not the file written, :class:`Doubt`)."""

    def __init__(self, path: Path, chunks: Iterable[bytes], written: Written):
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
                if end - start != 1 or high - low <= LONGEST:
                    raise Doubt
                while k < count and offsets[k] < high:
                    if offsets[k] != low:
                        raise Doubt
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
                    raise Doubt
                stop = buf.find(b"\n", line, end) + 1
                self.found.append((number, numbers[k]))
                number += 1
                k += 1
                yield buf[line:stop]
        if k < count or high != self._written.written:
            raise Doubt
        self.entries = self._written.entries

    def where(self, number: int) -> int:
        if not self.found or self.found[0][0] != number:
            raise Doubt  # a line the reader skipped: not what the writer wrote
        return self.found.popleft()[1]


def _messages_of_last(
    paths: list[Path], in_file: int, ids: list[str], written: Written | None
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


def find_snapshots(paths: list[Path], reader: ReadAhead, written: Written | None = None) -> Found:
    """``snapshots.json``'s snapshots (format 3: :func:`fmt.snapshot_reference_view`), the snapshot
    entries, the session's entry count and the last snapshot's messages, from the scanned lines
    only (the chunks of ``paths`` given by ``reader``). ``written``: what the writer of
    ``paths[0]`` knows of it (its lines are then neither counted nor searched); if the file is not
    as it says, the files are read again (after the copy) and scanned as any others."""
    if written is not None:
        chunks = reader.chunks()
        try:
            return scan(paths, reader, written, chunks)
        except Doubt:
            for _ in chunks:  # the copy of the files goes on to their end
                pass
            for _ in paths[1:]:
                for _ in reader.chunks():
                    pass
        reader = ReadAhead(paths, None)
        try:
            return scan(paths, reader, None, None)
        finally:
            reader.close()
    return scan(paths, reader, None, None)


class Found(NamedTuple):
    snapshots: SnapshotSpool  # snapshots.json's (the caller closes it)
    last: dict[str, Any] | None  # the last snapshot entry
    total: int  # the session's entries
    last_messages: list[dict[str, Any]]  # the views of the last snapshot's messages


def scan(
    paths: list[Path],
    reader: ReadAhead,
    written: Written | None,
    chunks: Iterator[bytes] | None,
    ahead: AheadViews | None = None,
) -> Found:
    """See :func:`find_snapshots`. ``ahead``: ``paths[0]``'s snapshots, all of them, taken where its
    writer wrote them (``written``): the scan goes on with the files after it (``reader`` reads
    those only)."""
    known = written
    snapshots = ahead.spool if ahead is not None else SnapshotSpool(paths[0].parent)
    try:
        return _scan_into(snapshots, paths, reader, written, chunks, known, ahead)
    except BaseException:
        snapshots.close()
        raise


def _scan_into(
    snapshots: SnapshotSpool,
    paths: list[Path],
    reader: ReadAhead,
    written: Written | None,
    chunks: Iterator[bytes] | None,
    known: Written | None,
    ahead: AheadViews | None = None,
) -> Found:
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
                raise Doubt  # a line the writer wrote as a snapshot entry is not one
        if written is not None:
            if scan.found:
                raise Doubt
            written = chunks = None  # the files after the first: child processes'
        offset += scan.entries
    messages = _messages_of_last(paths, last_file, ids or [], known) if last is not None else []
    return Found(snapshots, last, offset, messages)
