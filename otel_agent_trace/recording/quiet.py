"""Forwarding problems are told once, by us: the OTLP exporters' own retry/failure log lines
(one per attempt, on every run with a dead backend) are held back while we forward, and the last
one becomes the reason in our single warning."""

from __future__ import annotations

import logging
import threading
from typing import Any

from otel_agent_trace._internal.guard import in_own_io

# Loggers the OTLP exporters write their retry and failure messages to (besides their own modules).
_EXTRA_LOGGERS = ("opentelemetry.exporter.otlp.common.http", "opentelemetry.sdk._shared_internal")
_NOT_A_REASON = ("Shutdown in progress", "Exporter already shutdown", "OTLP client already")
_VAGUE = "Failed to export spans batch due to timeout"  # the HTTP exporter's last line says less


class _HoldBack(logging.Filter):
    """Drops warnings and errors logged on a thread that is forwarding for us; keeps the last one."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.last: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not in_own_io():
            return True
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        if message.startswith(_NOT_A_REASON) or (self.last and message.startswith(_VAGUE)):
            return False
        with self._lock:
            self.last = message
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
    """The last message an exporter tried to log while forwarding (``None`` if none)."""
    return _FILTER.last
