"""``agent_trace_context``: every piece of work keeps its parent span, in any thread or process.

* threads and thread pools (:mod:`.threads`);
* child processes get ``TRACEPARENT`` and the session identity (:mod:`.processes`);
* a process started with ``TRACEPARENT`` continues that trace (:mod:`.inherit`).

asyncio needs nothing: tasks copy the context when they are created (``gather`` included), and
``asyncio.to_thread`` copies it itself. Switch it all off with
``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=agent_trace_context``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from . import inherit, processes, threads
from ._patches import PATCHES


class ContextInstrumentor(BaseInstrumentor):
    """Context propagation across threads, executors and child processes."""

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        inherit.restore_parent_context()
        PATCHES.start(kwargs.get("tracer_provider"))
        threads.instrument()
        processes.instrument()

    def _uninstrument(self, **kwargs: Any) -> None:
        PATCHES.stop()


__all__ = ["ContextInstrumentor"]
