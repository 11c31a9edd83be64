"""Forwarding problems are told once, by us: the OTLP exporters' own retry/failure log lines
(one per attempt, on every run with a dead backend) are held back while we forward; the last one,
without its "retrying in …" (we say what happened instead), becomes the reason in our warning,
and the first one marks the backend as failing. After our last word at exit, nothing more."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

from otel_agent_trace._internal.guard import in_own_io

# Loggers the OTLP exporters write their retry and failure messages to (besides their own modules).
_EXTRA_LOGGERS = ("opentelemetry.exporter.otlp.common.http", "opentelemetry.sdk._shared_internal")
_NOT_A_REASON = ("Shutdown in progress", "Exporter already shutdown", "OTLP client already")
_VAGUE = "Failed to export"  # "… batch due to timeout, max retries or shutdown": the cause says more
_TRANSIENT = re.compile(
    r"Transient error (?P<error>.*?) encountered while exporting (?P<what>.*?),? retrying in [0-9.]+s\.?"
)
_RETRY = re.compile(r",? ?retrying in [0-9.]+s\.?")


def reason_of(message: str) -> str:
    """An exporter's log line as a reason: the error, without the retry schedule."""
    text = _TRANSIENT.sub(lambda m: f"{m['error']} (exporting {m['what']})", message)
    text = _RETRY.sub("", text).strip().rstrip(".,;")
    return text or message


class _HoldBack(logging.Filter):
    """Drops warnings and errors logged on a thread that is forwarding for us (any thread once we
    have said our last word); keeps the last one and when failures started."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.last: str | None = None
        self.failing_since: float | None = None
        self.silenced = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if not self.silenced and not in_own_io():
            return True
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the format string
            message = str(record.msg)
        if message.startswith(_NOT_A_REASON) or self.silenced:
            return False
        with self._lock:
            if self.failing_since is None:
                self.failing_since = time.monotonic()
            if not (self.last and message.startswith(_VAGUE)):
                self.last = reason_of(message)
        return False


_FILTER = _HoldBack()
_installed: set[str] = set()


def hold_back_logs_of(exporter: Any) -> None:
    """Route the log lines of ``exporter``'s modules (and the OTLP helpers) through the filter."""
    names = {cls.__module__ for cls in type(exporter).__mro__ if cls.__module__.startswith("opentelemetry")}
    for name in (*sorted(names), *_EXTRA_LOGGERS):
        if name not in _installed:
            _installed.add(name)
            logging.getLogger(name).addFilter(_FILTER)


def last_reason() -> str | None:
    """The last failure an exporter tried to log while forwarding (``None`` if none)."""
    return _FILTER.last


def failing_since() -> float | None:
    """Monotonic time of the first failure logged since the backend last took spans."""
    return _FILTER.failing_since


def note_success() -> None:
    """The backend took a batch: it is not failing (any more)."""
    _FILTER.failing_since = None


def silence() -> None:
    """Our last word is said: exporters' warnings from any thread are dropped from now on."""
    _FILTER.silenced = True
