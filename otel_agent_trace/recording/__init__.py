"""The recording engine: spans in, session files out.

One span processor (:class:`SessionSpanProcessor`) hands every span to the active
:class:`SessionRecorder`, which writes a crash-safe, parent-linked JSONL tree per tier
(``writer``, ``tiers``) and the session ZIP at stop (``archive``); ``lifecycle`` owns start, stop,
exit, SIGTERM and fork; ``forwarding`` redacts the same spans for OTLP backends; ``pipeline`` turns
the exporters named in ``OTEL_TRACES_EXPORTER`` into processors. The entry format itself belongs
to :mod:`otel_agent_trace.session_format`.

With a ``TracerProvider`` built by hand: ``add_session_processor(provider)``.
"""

from .exporter import AgentSessionSpanExporter
from .forwarding import ForwardingSpanProcessor, ShareableSpanExporter, redact_span
from .lifecycle import auto_start, start_session, stop_active
from .pipeline import session_processor_for
from .processor import SessionSpanProcessor, add_session_processor
from .recorder import SessionRecorder, layer_of
from .writer import SessionFileExists

__all__ = [
    "AgentSessionSpanExporter",
    "ForwardingSpanProcessor",
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
