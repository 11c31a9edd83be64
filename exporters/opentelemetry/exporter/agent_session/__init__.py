"""``opentelemetry.exporter.agent_session``: the entry-point name of the agent session exporter
(``OTEL_TRACES_EXPORTER=agent_session``). The engine lives in :mod:`otel_agent_trace.recording`;
this namespace only re-exports it."""

from otel_agent_trace.recording import (
    AgentSessionSpanExporter,
    SessionFileExists,
    SessionRecorder,
    SessionSpanProcessor,
    ShareableSpanExporter,
    add_session_processor,
    auto_start,
    layer_of,
    redact_span,
    session_processor_for,
    start_session,
    stop_active,
)

__all__ = [
    "AgentSessionSpanExporter",
    "SessionFileExists",
    "SessionRecorder",
    "SessionSpanProcessor",
    "ShareableSpanExporter",
    "add_session_processor",
    "auto_start",
    "layer_of",
    "redact_span",
    "session_processor_for",
    "start_session",
    "stop_active",
]
