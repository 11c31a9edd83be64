"""Keeping the host agent safe: our own I/O is never recorded, and our failures never reach it."""

from __future__ import annotations

import functools
import logging
import os
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


# Set to "raise" by the test-suite (tests/conftest.py), inherited by the processes it starts: an
# internal error of ours then fails the test instead of vanishing. In production it is swallowed
# and reported once.
INTERNAL_ERRORS_ENV = "AGENT_TRACE_INTERNAL_ERRORS"
internal_errors: list[tuple[str, BaseException]] = []  # the last few, for tests and debugging
_MAX_KEPT = 100


def internal_error(where: str, exc: BaseException) -> None:
    """A bug of ours was caught at ``where``: kept, re-raised under the test-suite, otherwise
    logged once per place and kind (the host agent goes on unharmed)."""
    with _reported_lock:
        if len(internal_errors) < _MAX_KEPT:
            internal_errors.append((where, exc))
    if os.environ.get(INTERNAL_ERRORS_ENV) == "raise":
        raise exc
    report_once(f"{where}:{type(exc).__name__}", "otel-agent-trace: %s failed: %r", where, exc)


def never_raise(where: str, default: Any = None) -> Callable[[F], F]:
    """Decorate instrumentation internals: an exception is logged once and ``default`` returned."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # instrumentation must never raise into the agent
                internal_error(where, exc)
                return default

        return wrapper  # type: ignore[return-value]

    return decorate
