"""How exporters named in ``OTEL_TRACES_EXPORTER`` become span processors under our configurator."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from .exporter import AgentSessionSpanExporter
from .processor import SessionSpanProcessor


def session_processor_for(exporter: Any) -> SpanProcessor:
    """``export_span_processor`` for the SDK configurator: our exporter becomes the synchronous
    session processor; any other exporter is batched behind the shareable (redacting) wrapper."""
    if isinstance(exporter, AgentSessionSpanExporter):
        return SessionSpanProcessor(exporter.settings)
    from .forwarding import ForwardingSpanProcessor, ShareableSpanExporter  # only when forwarding

    return ForwardingSpanProcessor(ShareableSpanExporter(exporter))
