"""``agent_trace_files``: file opens, deletes, renames and new directories, as span events on
the span that caused them (see :mod:`._hooks` for how, and ``docs/system-layer.md`` for why)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from . import _hooks


class FilesInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        _hooks.PATCHES.start(kwargs.get("tracer_provider"))
        _hooks.install()

    def _uninstrument(self, **kwargs: Any) -> None:
        _hooks.uninstall()


__all__ = ["FilesInstrumentor"]
