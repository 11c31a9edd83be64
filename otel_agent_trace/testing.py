"""Test helpers for code that records: deterministic span ids, a steppable clock, a fixed host.

Together they make a recording reproducible byte for byte::

    from otel_agent_trace import testing

    clock = testing.StepClock()
    with testing.deterministic(clock) as provider:          # sequential ids, SDK span times
        with oat.session("run", directory=d, environment=testing.fixed_environment(clock)):
            ...
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator

from otel_agent_trace._internal.sdk_compat import span_clock
from otel_agent_trace._version import __version__
from otel_agent_trace.recording.environment import Environment


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


def fixed_environment(
    clock: StepClock | None = None,
    *,
    hostname: str = "test-host",
    cwd: str = "/work/agent",
    pid: int = 4242,
    argv: tuple[str, ...] = ("agent.py",),
    session_id: str = "session-20231114-221320-0a0b0c0d",
) -> Environment:
    """A recorder environment with nothing taken from the machine: the clock, session id, host,
    pid, cwd, argv and time zone (UTC) are all given."""
    import time

    host = {
        "hostname": hostname,
        "platform": "Test-1.0-x86_64",
        "python_version": "3.11.0",
        "packages": {"otel-agent-trace": __version__},
    }
    return Environment(
        clock=clock or StepClock(),
        session_id=lambda: session_id,
        host=lambda: dict(host),
        pid=lambda: pid,
        ppid=lambda: 1,
        cwd=lambda: cwd,
        argv=lambda: list(argv),
        localtime=time.gmtime,
    )


@contextmanager
def deterministic(clock: StepClock | None = None, **provider_kwargs: Any) -> Iterator[TracerProvider]:
    """A global ``TracerProvider`` with sequential ids and the session processor, whose spans take
    their times from ``clock``, for the duration of the block (a fresh process: OpenTelemetry lets
    the global provider be set once)."""
    from otel_agent_trace.recording import SessionSpanProcessor

    provider = TracerProvider(id_generator=SequentialIdGenerator(), **provider_kwargs)
    provider.add_span_processor(SessionSpanProcessor(auto_session=False))
    provider._agent_trace_recording = True  # type: ignore[attr-defined]
    trace.set_tracer_provider(provider)
    with span_clock(clock or StepClock()):
        yield provider
