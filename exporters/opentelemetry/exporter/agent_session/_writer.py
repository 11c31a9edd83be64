"""One append-only session file of one tier: ids, parent links, and crash-safe writes."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import own_io, report_once

_LINE = fmt._OPTS | orjson.OPT_APPEND_NEWLINE  # exactly fmt.dumps' options
_RECENT_SPANS = 8192  # ended spans whose entry ids we remember (late children still find them)
_SEEN_MESSAGES = 100_000  # message hashes remembered for de-duplication


class SessionFileExists(FileExistsError):
    pass


_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


def _create(path: Path, first: bytes, mode: int) -> int:
    """An ``O_APPEND`` descriptor on a new file at ``path`` (never over an existing one), with
    ``first`` written in the next system call: everything the root entry needs is ready before
    the file exists, so only a kill between those two calls could leave an empty file (before,
    learning the host's metadata in between left one in a third of multiprocessing runs).
    (Linking in an ``O_TMPFILE`` would close even that gap, but ``/proc/self/fd`` links fail with
    ``EXDEV`` on some kernels and sandboxes, this one included.)"""
    try:
        fd = os.open(path, _FLAGS | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise SessionFileExists(f"{path}: a session file of that name already exists") from None
    if first:
        _write_fully(fd, first)
    if mode == 0o600:
        os.fchmod(fd, mode)  # private, whatever the umask
    return fd


def _write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class TierWriter:
    """Writes entries to one JSONL file with ``os.write`` on an ``O_APPEND`` descriptor.

    Each write is one complete line handed to the kernel, so the death of the process loses
    nothing already written. Ids are ``<prefix>-<seq>``, counted per file.
    """

    def __init__(
        self,
        path: Path,
        tier: str,
        prefix: str,
        *,
        fsync: bool = False,
        private: bool = False,
        root: dict[str, Any] | None = None,
    ):
        """Create the file (never over an existing one). With ``root``, the file comes into
        existence holding its root entry: no process death leaves it empty."""
        self.path = Path(path)
        self.tier = tier
        self.prefix = prefix
        self._fsync = fsync
        self._seq = 0
        # Reentrant: SIGTERM's handler (which writes session.end) runs on the main thread, maybe
        # while that thread is inside write(); a plain lock would deadlock the process there.
        self._lock = threading.RLock()
        self._live: dict[int, str] = {}
        self._recent: OrderedDict[int, str] = OrderedDict()
        self._messages: OrderedDict[str, str] = OrderedDict()
        self.root_id = ""
        self.entries = 0
        self.bytes = 0
        self.failed = False
        first = b""
        if root is not None:
            self.root_id = f"{prefix}-0000"
            first = fmt.dumps({"id": self.root_id, "parent_id": "", **root})
            self._seq = self.entries = 1
            self.bytes = len(first)
        with own_io():
            self._fd: int | None = _create(self.path, first, 0o600 if private else 0o644)

    # --- ids -----------------------------------------------------------------------------------

    def span_entry(self, span_id: int | None) -> str | None:
        if span_id is None:
            return None
        return self._live.get(span_id) or self._recent.get(span_id)

    def message_entry(self, digest: str) -> str | None:
        found = self._messages.get(digest)
        if found is not None:
            self._messages.move_to_end(digest)
        return found

    # --- writing -------------------------------------------------------------------------------

    def write(
        self,
        parent_id: str,
        fields: dict[str, Any],
        *,
        span_start: int | None = None,
        span_end: int | None = None,
        message: str | None = None,
    ) -> str | None:
        """Append one entry; returns its id (``None`` if the file could not be written)."""
        if self._fd is None:
            return None
        with self._lock:
            # The id is taken before the write: a signal handler that stops the session while this
            # thread is mid-write re-enters here (the lock is reentrant) and gets the next id.
            eid = f"{self.prefix}-{self._seq:04d}"
            self._seq += 1
            entry = {"id": eid, "parent_id": parent_id}
            entry.update(fields)
            try:  # the common case without fmt.dumps' frame; it handles whatever orjson cannot
                line = orjson.dumps(entry, option=_LINE)
            except (TypeError, orjson.JSONEncodeError):
                line = fmt.dumps(entry)
            try:
                written = os.write(self._fd, line)  # type: ignore[arg-type]
            except OSError as exc:
                self._failed(exc)
                return None
            if (written != len(line) or self._fsync) and not self._write_all(line, written):
                return None
            self.entries += 1
            self.bytes += len(line)
            if span_start is not None:
                self._live[span_start] = eid
            if span_end is not None:
                start_id = self._live.pop(span_end, None)
                if start_id is not None:
                    self._recent[span_end] = start_id
                    if len(self._recent) > _RECENT_SPANS:
                        self._recent.popitem(last=False)
            if message is not None:
                self._messages[message] = eid
                if len(self._messages) > _SEEN_MESSAGES:
                    self._messages.popitem(last=False)
            return eid

    def _write_all(self, data: bytes, written: int) -> bool:
        """Finish a short write (full disk, a signal) and fsync if asked. No own_io() around the
        writes: os.write/os.fsync raise no audit events and nothing wraps them (the flag matters
        for open/close), and this is the hot path of every span."""
        try:
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self._fd, view) :]  # type: ignore[arg-type]
            if self._fsync:
                os.fsync(self._fd)  # type: ignore[arg-type]
            return True
        except OSError as exc:
            self._failed(exc)
            return False

    def _failed(self, exc: OSError) -> None:
        self.failed = True
        report_once(f"write:{self.path}", "otel-agent-trace: cannot write %s: %s", self.path, exc)

    def open_spans(self) -> dict[int, str]:
        with self._lock:
            return dict(self._live)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                with own_io():
                    try:
                        if self._fsync:
                            os.fsync(self._fd)
                    finally:
                        os.close(self._fd)
                self._fd = None

    def abandon(self) -> None:
        """In a forked child: let go of the inherited descriptor without writing to the file (and
        without the lock, which a thread that does not exist in the child may hold)."""
        fd, self._fd = self._fd, None
        self._lock = threading.RLock()
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    @property
    def closed(self) -> bool:
        return self._fd is None
