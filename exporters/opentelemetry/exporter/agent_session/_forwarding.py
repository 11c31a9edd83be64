"""Forwarding to OTLP backends: the stream is shareable, so spans are redacted on the way out,
and a backend that is down is counted and reported once, never raised."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_agent_trace._internal.guard import logger, own_io, report_once
from otel_agent_trace.redaction import Redactor, get_redactor


def redact_span(span: ReadableSpan, redactor: Redactor) -> ReadableSpan:
    """A copy of ``span`` with name, attributes, events and status description redacted."""
    attrs = span.attributes
    events = span.events
    return ReadableSpan(
        name=redactor.redact_text(span.name),
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=redactor.redact(dict(attrs)) if attrs else attrs,
        events=[
            Event(e.name, redactor.redact(dict(e.attributes)) if e.attributes else e.attributes, e.timestamp)
            for e in events
        ],
        links=span.links,
        kind=span.kind,
        status=_redacted_status(span, redactor),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _redacted_status(span: ReadableSpan, redactor: Redactor) -> Any:
    status = span.status
    if not status.description:
        return status
    from opentelemetry.trace import Status

    return Status(status.status_code, redactor.redact_text(status.description))


class ShareableSpanExporter(SpanExporter):
    """Wraps any exporter: redacts each span, counts failed exports, reports them once."""

    def __init__(self, inner: SpanExporter, redactor: Redactor | None = None):
        self.inner = inner
        self._redactor = redactor
        self.failed_spans = 0
        self.exported_spans = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        redactor = self._redactor or get_redactor()
        try:
            shareable = [redact_span(s, redactor) for s in spans]
        except Exception as exc:
            report_once("forward.redact", "otel-agent-trace: redaction failed, spans not forwarded: %r", exc)
            return SpanExportResult.FAILURE
        try:
            with own_io():
                result = self.inner.export(shareable)
        except Exception as exc:
            result = SpanExportResult.FAILURE
            report_once("forward.raise", "otel-agent-trace: the OTLP exporter raised: %r", exc)
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self.exported_spans += len(spans)
            else:
                self.failed_spans += len(spans)
        if result is not SpanExportResult.SUCCESS:
            report_once(
                "forward.failed",
                "otel-agent-trace: could not forward spans to the OTLP backend (%s); the local session "
                "is complete. Failures are counted and reported again at exit.",
                type(self.inner).__name__,
            )
        return result

    def shutdown(self) -> None:
        try:
            with own_io():
                self.inner.shutdown()
        finally:
            if self.failed_spans:
                logger.warning(
                    "otel-agent-trace: %d span(s) were not forwarded to the OTLP backend (%d were).",
                    self.failed_spans,
                    self.exported_spans,
                )

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with own_io():
            return self.inner.force_flush(timeout_millis)
