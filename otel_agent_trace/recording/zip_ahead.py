"""A big session's ZIP member ``events.jsonl``, copied while the session runs.

Writing the ZIP is copying the session, and a copy runs at the speed of the disk's new pages
(250-450 MB/s on the machines measured, ``docs/benchmarks/zip.md``): at exit, a session of
several GB would take most of a killed pod's grace period. So once a session's own file is past
``zip_container.STORE_ABOVE`` (its ZIP's members are then stored, not deflated), a thread of ours copies
what its writer has written, ``STEP`` at a time, into the ZIP's temporary file as the data of the
``events.jsonl`` member, keeping its CRC-32; at stop, ``archive.export_zip`` copies only what is
left (the last few MB and the child processes' files) and writes the rest of the ZIP.

The copy reads only bytes the writer has handed to the kernel (``TierWriter.written``) and never
holds the writer's lock; the writer's only cost is one comparison per write (``on_growth``). A
forked child lets the parent's copy be. The temporary file is the export's
(``.<name>.<pid>.<random>.tmp``, removed by the watchdog if a signal's stop runs out of time);
only SIGKILL leaves it behind (``otel-agent-trace prune`` removes such leftovers).
"""

from __future__ import annotations

import _thread
import os
import queue
import weakref
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import internal_error, own_io

from .snapshot_spool import AheadViews, Doubt
from .zip_container import STORE_ABOVE, finished, member, stored, temporary, zip64_local_header, zip_name

if TYPE_CHECKING:
    from .writer import TierWriter

START = STORE_ABOVE + 1  # the session's own file this big: its ZIP member is stored
STEP = 8 << 20  # copied each time this much more is written
_CHUNK = 4 << 20  # read, CRC-32'd and written at a time (each releases the GIL)
_FLAGS = os.O_CLOEXEC if hasattr(os, "O_CLOEXEC") else 0


class ZipAhead:
    """The ``events.jsonl`` member of one tier's ZIP, in the ZIP's temporary file: a local header
    (ZIP64, sizes and CRC-32 filled in by :meth:`finish`), then the session's bytes as copied."""

    def __init__(self, writer: TierWriter, tmp: Path, mode: int):
        self.writer = writer
        self.tmp = tmp
        self.lock = _thread.allocate_lock()
        self.taken = False  # by the export: the thread copies no more
        self.copied = 0  # bytes of the member's data written (the session file's, then others')
        self.crc = 0
        # snapshots.json of the session file as it grows (None: dropped, made at stop)
        self.views: AheadViews | None = None
        placeholder = zip64_local_header(stored(zipfile.ZipInfo(fmt.ZIP_EVENTS)))
        self.header_size = len(placeholder)
        self.src = os.open(writer.path, os.O_RDONLY | _FLAGS)
        try:
            self.dst = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | _FLAGS, mode)
        except BaseException:
            os.close(self.src)
            raise
        try:
            _pwrite(self.dst, placeholder, 0)
            self.views = AheadViews(writer.path)
        except BaseException:
            self.close(remove=True)
            raise

    def advance_views(self) -> None:
        """Take the snapshot lines written so far into ``snapshots.json`` (see
        ``AheadViews``); on any doubt, leave them all to the export at stop."""
        views = self.views
        if views is None:
            return
        writer = self.writer
        try:
            if writer.failed or writer.partial:
                raise Doubt
            written = writer.written  # (before the offsets: a line being written is left for later)
            views.advance(self.src, writer.snapshot_offsets, writer.snapshot_lines, written)
        except Exception as exc:  # dropped: the export takes them all at stop
            self.views = None
            views.close()
            if not isinstance(exc, (Doubt, OSError)):  # a bug of ours
                internal_error("taking the session's snapshots ahead", exc)

    def take_views(self) -> AheadViews | None:
        """For the export: the snapshots taken while the session ran (``None``: none to take)."""
        views, self.views = self.views, None
        return views

    def copy(self, upto: int) -> None:
        """Copy the session file's bytes from where the copy is up to ``upto``."""
        while self.copied < upto:
            data = os.pread(self.src, min(_CHUNK, upto - self.copied), self.copied)
            if not data:
                raise OSError(f"{self.writer.path}: shorter than its writer wrote")
            self.write(data)

    def write(self, data: bytes) -> None:
        """Append ``data`` to the member (the export's sink for the files after the session's)."""
        self.crc = zlib.crc32(data, self.crc)
        _pwrite(self.dst, data, self.header_size + self.copied)
        self.copied += len(data)

    def finish(self, stamp: Any) -> zipfile.ZipInfo:
        """The member complete: its local header written with its size and CRC-32 (the same
        length as the placeholder: ZIP64 either way); returns its ``ZipInfo``."""
        info = stored(member(fmt.ZIP_EVENTS, stamp, self.copied))
        info.file_size = info.compress_size = self.copied
        info.CRC = self.crc
        info.header_offset = 0
        header = zip64_local_header(info)
        if len(header) != self.header_size:  # pragma: no cover - the same fields, the same length
            raise RuntimeError("the events.jsonl header changed length")
        _pwrite(self.dst, header, 0)
        return info

    def end(self) -> int:
        """The offset after the member's data."""
        return self.header_size + self.copied

    def close(self, *, remove: bool) -> None:
        views, self.views = self.views, None
        if views is not None:
            views.close()
        for fd in (self.src, self.dst):
            try:
                os.close(fd)
            except OSError:
                pass
        self.src = self.dst = -1
        if remove:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            finished(self.tmp)


def _pwrite(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


# --- which writers are copied, and the thread that copies ---------------------------------------

# (Weak: a writer is forgotten with its session.)
_aheads: weakref.WeakKeyDictionary[Any, ZipAhead] = weakref.WeakKeyDictionary()  # writer → its copy
_refused: weakref.WeakSet[Any] = weakref.WeakSet()  # writers whose copy failed or was taken
_names: weakref.WeakKeyDictionary[Any, tuple[Path, str, int]] = weakref.WeakKeyDictionary()
_lock = _thread.allocate_lock()  # _aheads, _refused, _names
_wake: queue.SimpleQueue[Any] = queue.SimpleQueue()  # writers grown (put: one C call)
_running = [False]  # the copying thread started


def watch(session_id: str, writers: list[TierWriter]) -> None:
    """Copy each of a session's files (its ``writers``) into its ZIP as it grows past ``START``."""
    if not hasattr(os, "pwrite"):  # (Windows: the export copies everything at stop)
        return
    for writer in writers:
        name = zip_name(session_id, writer.tier)
        mode = 0o600 if writer.tier == "checkpoint" else 0o644
        with _lock:
            _names[writer] = (writer.path.parent, name, mode)
        writer.on_growth(START, lambda writer=writer: _grown(writer))


def _grown(writer: TierWriter) -> int | None:
    """The writer's growth mark (its lock held, on the agent's thread): wake the copy; the next
    mark."""
    if writer in _refused:
        return None
    _wake.put(writer)
    if not _running[0]:
        _running[0] = True
        try:
            _thread.start_new_thread(_run, ())
        except RuntimeError:  # interpreter shutdown: the export copies it all
            return None
    return writer.written + STEP


def _run() -> None:
    while True:
        writer = _wake.get()
        try:
            with own_io():
                _copy(writer)
        except Exception as exc:  # a bug of ours: the export copies everything at stop
            _refuse(writer)
            internal_error("copying the session into its ZIP", exc)
        writer = None  # (not kept alive while waiting)


def _copy(writer: TierWriter) -> None:
    with _lock:
        if writer in _refused:
            return
        ahead = _aheads.get(writer)
        if ahead is None:
            named = _names.get(writer)
            if named is None:
                return
            directory, name, mode = named
            tmp = temporary(directory, name)
            try:
                ahead = ZipAhead(writer, tmp, mode)
            except OSError:  # the disk's problem: the export at stop meets it and says so
                finished(tmp)
                _refused.add(writer)
                return
            _aheads[writer] = ahead
    try:
        while True:  # a chunk at a time: the export takes the copy between two
            with ahead.lock:
                if ahead.taken:
                    return
                upto = min(writer.written, ahead.copied + _CHUNK)
                if ahead.copied >= upto:  # caught up: the snapshot lines written so far, then wait
                    ahead.advance_views()
                    return
                ahead.copy(upto)
    except OSError:  # (full disk, a file cut short): dropped, the export copies it all
        _refuse(writer)


def _refuse(writer: TierWriter) -> None:
    with _lock:
        _refused.add(writer)
        ahead = _aheads.pop(writer, None)
    if ahead is not None:
        with ahead.lock:
            ahead.taken = True
            ahead.close(remove=True)


def take(writer: TierWriter) -> ZipAhead | None:
    """For the export at stop: the writer's copy, if one was made (the thread copies no more of
    it; the caller finishes or closes it), else ``None``."""
    try:
        with _lock:
            _refused.add(writer)
            _names.pop(writer, None)
            ahead = _aheads.pop(writer, None)
    except TypeError:  # not a writer of ours (one that knows only its file's path): never copied
        return None
    if ahead is None:
        return None
    with ahead.lock:  # a chunk being copied is finished first
        ahead.taken = True
    return ahead


def _forget_in_child() -> None:
    """In a forked child: the parent's copies are the parent's (its descriptors closed here, its
    temporary files not removed)."""
    global _lock, _wake
    for ahead in list(_aheads.values()):
        finished(ahead.tmp)
        ahead.close(remove=False)
    _aheads.clear()
    _names.clear()
    _refused.clear()
    _lock = _thread.allocate_lock()
    _wake = queue.SimpleQueue()
    _running[0] = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
