"""The agent session exporter: a crash-safe, parent-linked JSONL session tree per tier, a session
ZIP at stop, and a redacting wrapper for forwarding the same spans to OTLP backends.

``OTEL_TRACES_EXPORTER=agent_session`` selects it; with a TracerProvider built by hand, add
``SessionSpanProcessor()``.
"""

from ._exporter import AgentSessionSpanExporter
from ._forwarding import ShareableSpanExporter, redact_span
from ._processor import SessionSpanProcessor, session_processor_for
from ._recorder import SessionRecorder, auto_start, layer_of, start_session, stop_active
from ._writer import SessionFileExists

__all__ = [
    "AgentSessionSpanExporter",
    "SessionFileExists",
    "SessionRecorder",
    "SessionSpanProcessor",
    "ShareableSpanExporter",
    "auto_start",
    "layer_of",
    "redact_span",
    "session_processor_for",
    "start_session",
    "stop_active",
]
