"""Keeping the host agent safe: our own I/O is never recorded, and our failures never reach it."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

logger = logging.getLogger("otel_agent_trace")

_local = threading.local()
_reported: set[str] = set()
_reported_lock = threading.RLock()  # re-entrant: a signal handler may report while the main thread does

F = TypeVar("F", bound=Callable[..., Any])


def in_own_io() -> bool:
    """True while the recorder itself does I/O on this thread (the system layer skips it)."""
    return getattr(_local, "own_io", 0) > 0


@contextmanager
def own_io() -> Iterator[None]:
    _local.own_io = getattr(_local, "own_io", 0) + 1
    try:
        yield
    finally:
        _local.own_io -= 1


def report_once(key: str, message: str, *args: Any, level: int = logging.WARNING) -> None:
    """Log a problem of ours once per process (instrumentation failures must not spam)."""
    with _reported_lock:
        if key in _reported:
            return
        _reported.add(key)
    logger.log(level, message, *args)


def never_raise(where: str, default: Any = None) -> Callable[[F], F]:
    """Decorate instrumentation internals: an exception is logged once and ``default`` returned."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # instrumentation must never raise into the agent
                report_once(f"{where}:{type(exc).__name__}", "otel-agent-trace: %s failed: %r", where, exc)
                return default

        return wrapper  # type: ignore[return-value]

    return decorate
