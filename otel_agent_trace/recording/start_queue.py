"""The start queue: span starts and span events waiting to be written, and the flusher thread
that writes them within the window (``AGENT_TRACE_FLUSH_MS``).

A span's start is queued (the span itself, nothing serialized) and written, in order, by the
flusher thread within the window or sooner by whatever is written next: any entry under a
queued span or another span's end. A span that ends while its start is still the last one queued
(most spans: short, no children) gets one ``span.end`` entry that says it all (one
serialization, one system call). So a killed process loses no finished span, and a span still
running is in the file once it is older than the window (sooner if anything happens under it).
A window of 0 writes every start at once.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from otel_agent_trace._internal.guard import internal_error, own_io

# Queued starts and events beyond this are written at once: memory stays bounded, and a batch of
# this size is cheaper per entry than a bigger one (its objects stay in the CPU's caches).
MAX_QUEUED = 256


class QueuedEvent:
    """A span event waiting in the queue with the span starts (``context`` is ``None``: never
    taken for a span whose end is being written)."""

    __slots__ = ("span", "name", "ts", "attributes", "layer")
    context = None

    def __init__(self, span: Any, name: str, ts: int, attributes: Any, layer: str):
        self.span = span
        self.name = name
        self.ts = ts
        self.attributes = attributes
        self.layer = layer


class StartQueue:
    """Queued spans (their starts) and :class:`QueuedEvent` s, in order, and the flusher thread.

    ``items`` is appended to without the lock (``list.append`` is atomic); it is taken under
    ``lock``, the recorder's, which the flusher holds while it calls ``flush`` (the recorder's:
    it writes what it takes from here)."""

    def __init__(self, flush_ms: int, lock: Any, flush: Callable[[], None]):
        self.window = max(0, flush_ms) / 1000  # seconds; 0: starts at once
        self.items: list[Any] = []
        self.idle = True  # the flusher sleeps without a timeout (or does not exist yet)
        self.stopped = False
        self._lock = lock
        self._flush = flush
        self._thread: threading.Thread | None = None
        # The flusher's wake-up: a SimpleQueue, whose put is one C call. (A threading.Event's set
        # holds a Python-level lock: a SIGTERM handler stopping the session while the main thread
        # was inside set() deadlocked on it until the watchdog killed the process.)
        self._wake: queue.SimpleQueue[None] = queue.SimpleQueue()

    @property
    def thread(self) -> threading.Thread | None:
        """The flusher thread, once something was queued with a window."""
        return self._thread

    def take(self, without: Any = None) -> list[Any]:
        """What is queued, removed from the queue (caller holds the lock; what other threads queue
        meanwhile stays queued, in order). ``without``: a span context whose start, if it is the
        last thing queued, is dropped: that span's end entry will say it all."""
        pending = self.items
        if not pending:
            return []
        items = pending[:]
        del pending[: len(items)]
        if without is not None and items[-1].context is without:
            items.pop()
        return items

    def put_back(self, start: Any) -> None:
        """Queue a span's start again ahead of what was queued after it was taken."""
        self.items.insert(0, start)

    def wake(self) -> None:
        """Something was queued while the flusher slept (or before it existed)."""
        self.idle = False
        if self._thread is None:
            with own_io():
                self._thread = threading.Thread(target=self._loop, name="otel-agent-trace-flush", daemon=True)
                self._thread.start()
        else:
            self._wake.put(None)

    def stop(self) -> None:
        """End the flusher thread (what is queued is the caller's to write first)."""
        self.stopped = True
        self._wake.put(None)

    def _loop(self) -> None:
        """Writes queued starts within the window; sleeps without wake-ups while none are queued."""
        wake = self._wake
        try:
            while not self.stopped:
                while not self.stopped:
                    if self.window:
                        try:  # a sleep that stop() cuts short
                            wake.get(timeout=self.window)
                        except queue.Empty:
                            pass
                    _drain(wake)
                    if self.stopped:
                        return
                    self.idle = True  # before looking: a start queued after the look wakes us
                    if not self.items:
                        break
                    self.idle = False
                    with self._lock:
                        if not self.stopped:
                            self._flush()
                wake.get()
                _drain(wake)
        except Exception as exc:  # pragma: no cover - never let the thread die noisily
            self.window = 0.0  # write starts at once from now on
            internal_error("the flusher thread", exc)


def _drain(wake: queue.SimpleQueue[None]) -> None:
    """Forget the wake-ups already sent (the flusher is awake)."""
    try:
        while True:
            wake.get_nowait()
    except queue.Empty:
        pass
