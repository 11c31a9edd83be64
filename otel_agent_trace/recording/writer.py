"""One append-only session file of one tier: ids, parent links, and crash-safe writes."""

from __future__ import annotations

import os
import threading
from array import array
from collections import OrderedDict  # messages: least recently used first
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import internal_error, own_io, report_once

_FAST = orjson.OPT_APPEND_NEWLINE  # what span entries need (str keys); fmt.dumps handles the rest
_IDENTITY = tuple(sorted(fmt.SPAN_IDENTITY_ATTRIBUTES))  # (a fixed order: that of a null's key)
_NAMES = fmt.SPAN_NAMES_REMEMBERED
_NONE: dict[str, Any] = {}  # no identity attributes (shared, never changed)
_RECENT_SPANS = 8192  # ended spans whose entry ids we remember (late children still find them)
_SEEN_MESSAGES = 100_000  # message hashes remembered for de-duplication
_NEVER = 1 << 62  # no growth watched (a mark no file reaches)


def _dumps(entry: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(entry, option=_FAST)
    except (TypeError, orjson.JSONEncodeError):
        return fmt.dumps(entry)


class SessionFileExists(FileExistsError):
    pass


# What a span entry is to its span (``SpanLine.role``).
START: Literal["start"] = "start"
EVENT: Literal["event"] = "event"
END: Literal["end"] = "end"


class SpanLine(NamedTuple):
    """One span entry for :meth:`TierWriter.write_spans`: the entry (its ``id`` set there; a
    ``parent_id`` of ``None`` resolved there), the span it is about, what it is to that span
    (``START``, ``EVENT`` or ``END``: an end retires the span), and the span's parent span id."""

    entry: dict[str, Any]
    span_id: int
    role: Literal["start", "event", "end"]
    parent_span: int | None


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
        try:
            _write_fully(fd, first)
        except BaseException:  # (a full disk): no file left holding nothing or a torn root line
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
            raise
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
        root_parent: str = "",
        lock: Any = None,
    ):
        """Create the file (never over an existing one). With ``root``, the file comes into
        existence holding its root entry (under ``root_parent``: the entry in the parent process's
        file that a child process's file continues): no process death leaves it empty. ``lock`` (reentrant):
        the owner's, when it writes under its own lock anyway (re-entering it is cheaper)."""
        self.path = Path(path)
        self.tier = tier
        self.prefix = prefix
        self._id_format = prefix.replace("%", "%%") + "-%04d"
        self._fsync = fsync
        self._seq = 0
        # Reentrant: SIGTERM's handler (which writes session.end) runs on the main thread, maybe
        # while that thread is inside write(); a plain lock would deadlock the process there.
        self._lock = lock if lock is not None else threading.RLock()
        self._live: dict[int, str] = {}
        # Entry ids of ended spans (see _ended).
        self._recent: dict[int, str] = {}
        self._older: dict[int, str] = {}
        self._messages: OrderedDict[str, str] = OrderedDict()
        # Span name → (entry id, identity attributes) of the latest span entry of that name.
        self._names: dict[str, tuple[str, dict[str, Any]]] = {}
        self.root_id = ""
        self.entries = 0  # lines written (whole: a failed write is not counted)
        self.failed = False  # a write failed (the file then takes no more: see _lost)
        self.partial = False  # a write was finished by more than one call
        # What the ZIP export takes from here instead of scanning the file again: the bytes
        # written, and the byte offset and line number (0-based) of each snapshot entry's line.
        self.written = 0
        self.snapshot_offsets = array("q")
        self.snapshot_lines = array("q")
        # ``on_growth``: once ``written`` reaches ``_grown_at``, ``_grown()`` is called (with the
        # lock held) and returns the next mark (the ZIP's copy ahead: recording.zip_ahead).
        self._grown_at = _NEVER
        self._grown: Any = None
        first = b""
        if root is not None:
            self.root_id = f"{prefix}-0000"
            first = fmt.dumps({"id": self.root_id, "parent_id": root_parent, **root})
            self._seq = self.entries = 1
            self.written = len(first)
        with own_io():
            self._fd: int | None = _create(self.path, first, 0o600 if private else 0o644)

    # --- ids -----------------------------------------------------------------------------------

    def span_entry(self, span_id: int | None) -> str | None:
        if span_id is None:
            return None
        return self._live.get(span_id) or self._recent.get(span_id) or self._older.get(span_id)

    def live_entry(self, span_id: int | None) -> str | None:
        """The start entry of a span that is open in this file (started, not ended), if any: an
        entry under it need not repeat that span's ids (the reader takes them from the start)."""
        return self._live.get(span_id)  # type: ignore[arg-type]

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
        message: str | None = None,
        snapshot: bool = False,
    ) -> str | None:
        """Append one entry (not a span's: see :meth:`write_spans`, :meth:`write_end`); returns its
        id (``None`` if the file could not be written). ``message``: the digest it is found by;
        ``snapshot``: a snapshot entry (where its line is, is remembered for the ZIP export)."""
        with self._lock:
            fd = self._fd  # read under the lock: close() may hand the number to another file
            if fd is None or self.failed:  # (a failed write: the file takes no more)
                return None
            # The id is taken before the write: a signal handler that stops the session while this
            # thread is mid-write re-enters here (the lock is reentrant) and gets the next id.
            seq = self._seq
            self._seq = seq + 1
            eid = self._id_format % seq
            entry = {"id": eid, "parent_id": parent_id}
            entry.update(fields)
            line = _dumps(entry)
            if snapshot:
                self.snapshot_offsets.append(self.written)
                self.snapshot_lines.append(self.entries)
            if not self._emit(fd, line, 1):
                return None
            if message is not None:
                self._messages[message] = eid
                if len(self._messages) > _SEEN_MESSAGES:
                    self._messages.popitem(last=False)
            return eid

    def write_spans(self, lines: list[SpanLine]) -> bool:
        """Append span entries in order with one system call: the hot path of every span (its
        start and end, after the starts of spans still running that were not written yet).

        A ``parent_id`` of ``None`` is resolved here, in order, so an entry can hang under a start
        written earlier in the same call: an event or end under the span's start entry, a start
        (or an entry whose span's start is unknown) under ``parent_span``'s, else under the root.
        An event under its span's open start entry leaves out ``trace_id`` (the reader takes it
        from the start).
        """
        with self._lock:
            fd = self._fd
            if fd is None or self.failed:  # (a failed write: the file takes no more)
                return False
            live = self._live
            entry_of = self.span_entry
            data = []
            for entry, sid, role, parent_span in lines:
                # Each id is taken before anything is written: a signal handler that writes while
                # this thread is mid-call re-enters (the lock is reentrant) and gets the next ids.
                seq = self._seq
                self._seq = seq + 1
                entry["id"] = eid = self._id_format % seq
                if entry["parent_id"] is None:
                    if role is EVENT and sid in live:  # an event under its span's open start
                        entry["parent_id"] = live[sid]
                        del entry["trace_id"]
                    else:
                        pid = entry_of(sid) if role is not START else None
                        entry["parent_id"] = pid or entry_of(parent_span) or self.root_id
                if role is not EVENT and "content" in entry:
                    self._said_before(entry, eid)
                data.append(_dumps(entry))
                if role is START:
                    live[sid] = eid
                elif role is END:
                    self._ended(sid, eid)
            return self._emit(fd, data[0] if len(data) == 1 else b"".join(data), len(data))

    def write_end(self, entry: dict[str, Any], span_id: int, parent_span: int | None) -> bool:
        """A span's end entry alone: the hot path of a short span. It goes under the span's start
        entry if one was written, else under its parent span's entry, else under the root."""
        with self._lock:
            fd = self._fd
            if fd is None or self.failed:  # (a failed write: the file takes no more)
                return False
            seq = self._seq
            self._seq = seq + 1
            entry["id"] = eid = self._id_format % seq
            entry["parent_id"] = (
                self._live.get(span_id)
                or (parent_span is not None and self.span_entry(parent_span))
                or self.root_id
            )
            if "content" in entry:
                self._said_before(entry, eid)
            if not self._emit(fd, _dumps(entry), 1):
                return False
            self._ended(span_id, eid)
            return True

    def _said_before(self, entry: dict[str, Any], eid: str) -> None:
        """Leave out of a span entry with content (a tool or model call) the identity attributes
        (``fmt.SPAN_IDENTITY_ATTRIBUTES``) that the latest such entry of the same name had, naming
        it (``like``); one it had that this span does not is written ``null``. Remembers this
        entry's for the next. (Spans without content, whose attributes rarely repeat, skip it.)"""
        attrs: dict[str, Any] = entry.get("attributes") or _NONE
        if attrs:  # (found and taken in C: a span has a few of these among many attributes)
            present = tuple(filter(attrs.__contains__, _IDENTITY))
            carried = dict(zip(present, map(attrs.__getitem__, present), strict=True)) if present else _NONE
        else:
            carried = _NONE
        names = self._names
        name = entry["name"]
        previous = names.get(name)
        if previous is None:
            if len(names) >= _NAMES:
                names.clear()
            names[name] = (eid, carried)
            return
        names[name] = (eid, carried)
        before = previous[1]
        unchanged = before == carried  # the common case: the same identity as before
        if unchanged:
            if len(carried) < 2:  # a reference costs about as much as one attribute
                return
            same: Any = carried
        else:
            same = [k for k, v in carried.items() if k in before and before[k] == v]
            if len(same) < 2:
                return
        written = dict(attrs)  # (its order kept, less what is said before)
        for key in same:
            del written[key]
        if not unchanged:
            for key in before:
                if key not in carried:
                    written[key] = None
        if written:
            entry["attributes"] = written
        else:
            del entry["attributes"]
        entry["like"] = previous[0]

    def _ended(self, span_id: int, end_id: str) -> None:
        """Retire an ended span from the live map; remember its start entry (or, when it had
        none, its end entry) so that late entries of the span (a child that outlives its parent)
        still hang under it. Two generations of plain dicts: the older dropped when the newer
        fills up."""
        recent = self._recent
        recent[span_id] = self._live.pop(span_id, None) or end_id
        if len(recent) >= _RECENT_SPANS:
            self._older, self._recent = recent, {}

    def _emit(self, fd: int, data: bytes, count: int) -> bool:
        """Hand ``data`` (``count`` whole lines) to the kernel; the caller holds the lock."""
        try:
            written = os.write(fd, data)
        except OSError as exc:
            self._lost(fd, data, 0, exc)
            return False
        if (written != len(data) or self._fsync) and not self._write_all(fd, data, written):
            return False
        self.entries += count
        self.written += len(data)
        if self.written >= self._grown_at:
            self._on_grown()
        return True

    def on_growth(self, at: int, callback: Any) -> None:
        """Call ``callback()`` once ``written`` reaches ``at``, and again at each mark it returns
        (``None``: no more). It runs on the writing thread with the lock held: it must be quick."""
        with self._lock:
            self._grown = callback
            self._grown_at = _NEVER if callback is None else at
            if self.written >= self._grown_at:
                self._on_grown()

    def _on_grown(self) -> None:
        self._grown_at = _NEVER
        try:
            at = self._grown()
        except Exception as exc:  # a bug of ours: never the agent's problem
            internal_error("the session file's growth callback", exc)
            return
        if at is not None:
            self._grown_at = at

    def _write_all(self, fd: int, data: bytes, written: int) -> bool:
        """Finish a short write (full disk, a signal) and fsync if asked. No own_io() around the
        writes: os.write/os.fsync raise no audit events and nothing wraps them (the flag matters
        for open/close), and this is the hot path of every span."""
        if written != len(data):
            self.partial = True  # complete in the end, but the file is not taken on trust
        try:
            view = memoryview(data)[written:]
            while view:
                if self.failed or self._fd != fd:  # stopped meanwhile (by a signal handler's write)
                    return False
                done = os.write(fd, view)
                written += done
                view = view[done:]
            if self._fsync:
                os.fsync(fd)
            return True
        except OSError as exc:
            self._lost(fd, data, written, exc)
            return False

    def _lost(self, fd: int, data: bytes, done: int, exc: OSError) -> None:
        """A write failed (a full disk, a quota, an I/O error) after ``done`` bytes of ``data``
        reached the file. The torn line they end with is cut off (the file ends where the last
        whole line does) and nothing more is written to the file, even once there is room again:
        an entry written later could name a lost one (its parent, ``like``, ``prev``, a message
        id), and a prefix of the file is always a whole tree. Should the cut itself fail, the torn
        line is at least the last one, which the reader skips. Reported once, with what is kept."""
        if not self.failed and self._fd == fd:  # (else the file was stopped or closed meanwhile)
            keep = data.rfind(b"\n", 0, done) + 1  # the whole lines that reached the file
            if keep < done:
                try:
                    with own_io():
                        os.ftruncate(fd, self.written + keep)
                except OSError:
                    pass  # a torn last line, which the reader skips (and nothing after it)
            if keep:
                self.entries += data.count(b"\n", 0, keep)
                self.written += keep
        self.failed = True  # (the descriptor is kept until close(): nothing else gets its number)
        report_once(
            f"write:{self.path}",
            "otel-agent-trace: cannot write %s: %s; it keeps the %d entries written before, "
            "and nothing more of this session is recorded in it",
            self.path,
            exc,
            self.entries,
        )

    def open_spans(self) -> dict[int, str]:
        with self._lock:
            return dict(self._live)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                with own_io():
                    try:
                        if self._fsync and not self.failed:  # (after a failed write it would fail again)
                            os.fsync(self._fd)
                    finally:
                        os.close(self._fd)
                self._fd = None

    def abandon(self) -> None:
        """In a forked child: let go of the inherited descriptor without writing to the file (and
        without the lock, which a thread that does not exist in the child may hold)."""
        fd, self._fd = self._fd, None
        self._lock = threading.RLock()
        self._grown_at, self._grown = _NEVER, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    @property
    def closed(self) -> bool:
        return self._fd is None
