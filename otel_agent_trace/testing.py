"""Test helpers: deterministic span ids and a steppable clock, for tests of code that records."""

from __future__ import annotations

import itertools
import threading

from opentelemetry.sdk.trace.id_generator import IdGenerator


class SequentialIdGenerator(IdGenerator):
    """Trace ids 1, 2, 3… and span ids 1, 2, 3… (as 128/64-bit integers)."""

    def __init__(self) -> None:
        self._trace = itertools.count(1)
        self._span = itertools.count(1)
        self._lock = threading.Lock()

    def generate_trace_id(self) -> int:
        with self._lock:
            return next(self._trace)

    def generate_span_id(self) -> int:
        with self._lock:
            return next(self._span)


class StepClock:
    """A clock in nanoseconds that moves ``step_ns`` each time it is read."""

    def __init__(self, start_ns: int = 1_700_000_000_000_000_000, step_ns: int = 1_000_000):
        self._now = start_ns
        self._step = step_ns
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            self._now += self._step
            return self._now
