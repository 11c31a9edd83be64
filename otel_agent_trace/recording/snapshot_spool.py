"""``snapshots.json`` as the export makes it: spooled a snapshot at a time (in memory, then in a
temporary file: bounded memory however many snapshots), and, for the session's own file, taken
ahead where its writer wrote each snapshot line (``TierWriter.snapshot_offsets``) while the session
runs (``recording.zip_ahead``), so that the stop takes only those written since."""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import MAX_LINE_BYTES, LineReader

LONGEST = MAX_LINE_BYTES + 1  # a line of more bytes (its newline counted) is dropped by the reader


class Doubt(Exception):
    """The writer's own file is not as its writer says: it is scanned as any other file."""


_SPOOLED_IN_MEMORY = 4 << 20  # snapshots.json kept in memory up to this, then in a temporary file
_SPOOL_BLOCK = 1 << 20  # written to that file this much at a time


class SnapshotSpool:
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


class AheadViews:
    """``snapshots.json`` of the session's own file, made while the session runs: the copy thread
    of ``recording.zip_ahead`` takes the snapshot lines its writer wrote (``TierWriter``'s
    ``snapshot_offsets`` and ``snapshot_lines``) as the file grows, read where the writer wrote
    them in the file mapped in memory, so that the stop takes only those written since. (A session
    of an automatic snapshot at each model call has one every few KB: taken at stop, they set its
    pace, not the copy.) Any doubt (:class:`Doubt`) and they are dropped: the stop takes them all
    again, and on a doubt of its own copies and scans the files as any others."""

    def __init__(self, path: Path):
        self.spool = SnapshotSpool(path.parent)
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
        (the writer has stopped), else :class:`Doubt`."""
        count = min(len(offsets), len(numbers))
        k = self.taken
        if k >= count and not final:
            return
        try:
            mapped = mmap.mmap(fd, written, prot=mmap.PROT_READ)
        except (ValueError, OSError):  # (the file is shorter than its writer wrote)
            raise Doubt from None
        with mapped as mm:
            if self._lines is None:
                end = mm.find(b"\n", 0, LONGEST)
                lines = LineReader()
                if end < 0 or lines.entry(mm[:end]) is None:
                    raise Doubt  # (a root line the reader does not take as it is)
                self._lines, self._root_end = lines, end
            try:
                while k < count:
                    offset = offsets[k]
                    if offset >= written:
                        break  # not written yet
                    if offset <= self._root_end or mm[offset - 1] != 10:
                        raise Doubt  # not where a line starts
                    stop = mm.find(b"\n", offset, offset + LONGEST)
                    if stop < 0:
                        if offset + LONGEST >= written:
                            break  # not written whole yet
                        k += 1  # too long: the reader drops it
                        continue
                    entry = self._lines.entry(mm[offset:stop])
                    if entry is None or entry.get("type") != fmt.SNAPSHOT:
                        raise Doubt
                    index = numbers[k]
                    view, self.ids = fmt.snapshot_reference_view(entry, index - self.previous - 1, self.ids)
                    self.spool.add(view)
                    self.last, self.previous = entry, index
                    k += 1
            finally:
                self.taken = k
        if final and k != len(offsets):
            raise Doubt

    def close(self) -> None:
        self.spool.close()
