"""``agent_trace_processes``: child processes as child spans of the span that started them
(command, working directory, pid, exit code, duration); ``exec`` and ``fork`` as events."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from . import _hooks


class ProcessesInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        _hooks.PATCHES.start(kwargs.get("tracer_provider"))
        _hooks.install()

    def _uninstrument(self, **kwargs: Any) -> None:
        _hooks.uninstall()


__all__ = ["ProcessesInstrumentor"]
