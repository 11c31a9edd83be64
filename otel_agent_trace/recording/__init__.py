"""The recording engine: spans in, session files out.

One span processor (:class:`SessionSpanProcessor`) hands every span to the active
:class:`SessionRecorder`, which writes a crash-safe, parent-linked JSONL tree per tier (``writer``,
``tiers``, ``tier_state``: entries built by ``span_entries``, starts queued by ``start_queue``,
messages stored once by ``message_store``, ``snapshots``, ``span_content``) and the session ZIP at
stop (``archive``, over ``zip_container`` and ``snapshot_spool``; ``zip_ahead`` copies a big one
as it grows); ``lifecycle`` owns
start, stop, exit, SIGTERM and fork; ``environment`` the clock, ids and host facts it reads;
``forwarding`` redacts the same spans for OTLP backends; ``pipeline`` turns the exporters named in
``OTEL_TRACES_EXPORTER`` into processors. The entry format itself belongs to
:mod:`otel_agent_trace.session_format`.

With a ``TracerProvider`` built by hand: ``add_session_processor(provider)``.

Names load on first use: every Python child process of an agent run under
``opentelemetry-instrument`` imports this package, and most never forward a span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_agent_trace._lazy import lazy_names

if TYPE_CHECKING:
    from .exporter import AgentSessionSpanExporter
    from .forwarding import ForwardingSpanProcessor, ShareableSpanExporter, redact_span
    from .lifecycle import auto_start, start_session, stop_active
    from .pipeline import session_processor_for
    from .processor import SessionSpanProcessor, add_session_processor
    from .recorder import SessionRecorder
    from .span_entries import layer_of
    from .writer import SessionFileExists

_LAZY = {
    "AgentSessionSpanExporter": "exporter",
    "ForwardingSpanProcessor": "forwarding",
    "ShareableSpanExporter": "forwarding",
    "redact_span": "forwarding",
    "auto_start": "lifecycle",
    "start_session": "lifecycle",
    "stop_active": "lifecycle",
    "session_processor_for": "pipeline",
    "SessionSpanProcessor": "processor",
    "add_session_processor": "processor",
    "SessionRecorder": "recorder",
    "layer_of": "span_entries",
    "SessionFileExists": "writer",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


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
