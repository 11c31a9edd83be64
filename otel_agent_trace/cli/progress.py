"""The one progress line the commands show on standard error, only when it is a terminal:
``label [#####.....] done/total unit`` when the total is known, ``label done unit`` when not."""

from __future__ import annotations

import sys
import time
from typing import IO

from otel_agent_trace.offline.terminal import fit

CELLS = 30
EVERY = 0.1  # seconds between two redraws (the last one is always drawn)


class Progress:
    """Call with ``(done, total)`` (``total`` ``None`` when unknown); ``end()`` closes the line.
    The line is also closed when ``done`` reaches a known ``total``."""

    def __init__(self, label: str, unit: str = "", stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.label = fit(label, 40)
        self.unit = f" {unit}" if unit else ""
        self.open = False
        self.last = 0.0
        self.latest: tuple[int, int | None] | None = None  # the last call, drawn or not
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False

    def __call__(self, done: int, total: int | None = None) -> None:
        if not self.tty:
            return
        self.latest = (done, total)
        finished = total is not None and done >= total
        now = time.monotonic()
        if not finished and self.open and now - self.last < EVERY:
            return
        self.last = now
        self._draw(done, total)
        if finished:
            self.end()

    def _draw(self, done: int, total: int | None) -> None:
        if total is None:
            line = f"{self.label} {done}{self.unit}"
        else:
            filled = CELLS * min(done, total) // total if total > 0 else CELLS
            line = f"{self.label} [{'#' * filled}{'.' * (CELLS - filled)}] {done}/{total}{self.unit}"
        self.stream.write(f"\r{line}")
        self.stream.flush()
        self.open = True
        self.latest = None

    def end(self) -> None:
        if self.latest is not None:
            self._draw(*self.latest)  # the last count, had it come too soon after the one before
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False
