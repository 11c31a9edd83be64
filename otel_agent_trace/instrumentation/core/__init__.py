"""``agent_trace_core``: makes sure the session is recorded whatever configurator set up the SDK.

When another configurator (``opentelemetry-distro``'s, say) built the TracerProvider without our
session processor, this instrumentor adds it, so ``opentelemetry-instrument`` always records the
local session. ``AGENT_TRACE_RECORD=false`` turns local recording off.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor
from opentelemetry.trace import get_tracer_provider


class CoreInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        return ()

    def _instrument(self, **kwargs: Any) -> None:
        from otel_agent_trace.recording import add_session_processor

        add_session_processor(kwargs.get("tracer_provider") or get_tracer_provider())

    def _uninstrument(self, **kwargs: Any) -> None:
        pass
