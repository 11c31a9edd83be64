"""Forwarding to OTLP backends: the stream is shareable, so spans are redacted on the way out,
and a backend that is down is counted and reported once, never raised.

Every exporter our configurator sets up other than the session files (``otlp``, ``console``, …)
is wrapped, so spans of any instrumentation, ours or a third party's, are redacted alike. Message
content reaches spans only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` allows it
(and is then redacted like everything else).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from otel_agent_trace._internal.guard import logger, own_io, report_once
from otel_agent_trace.redaction import Redactor, get_redactor


def redact_span(
    span: ReadableSpan, redactor: Redactor, resources: dict[int, Any] | None = None
) -> ReadableSpan:
    """A copy of ``span`` with its name, attributes, events, links, status description and
    resource attributes redacted (``resources`` caches redacted resources by identity)."""
    attrs = span.attributes
    return ReadableSpan(
        name=redactor.redact_text(span.name),
        context=span.context,
        parent=span.parent,
        resource=_redacted_resource(span.resource, redactor, resources),
        attributes=redactor.redact_attributes(attrs) if attrs else attrs,
        events=[
            Event(
                redactor.redact_text(e.name),
                redactor.redact(dict(e.attributes)) if e.attributes else e.attributes,
                e.timestamp,
            )
            for e in span.events
        ],
        links=[
            Link(link.context, redactor.redact(dict(link.attributes))) if link.attributes else link
            for link in span.links
        ],
        kind=span.kind,
        status=_redacted_status(span, redactor),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _redacted_resource(resource: Any, redactor: Redactor, cache: dict[int, Any] | None) -> Any:
    if resource is None or not resource.attributes:
        return resource
    key = id(resource)
    if cache is not None:
        found = cache.get(key)
        if found is not None and found[0] is resource:
            return found[1]
    redacted = redactor.redact(dict(resource.attributes))
    out = resource if redacted == dict(resource.attributes) else Resource(redacted, resource.schema_url)
    if cache is not None:
        if len(cache) > 64:
            cache.clear()
        cache[key] = (resource, out)
    return out


def _redacted_status(span: ReadableSpan, redactor: Redactor) -> Any:
    status = span.status
    if not status.description:
        return status
    return Status(status.status_code, redactor.redact_text(status.description))


class ShareableSpanExporter(SpanExporter):
    """Wraps any exporter: redacts each span, counts failed exports, reports them once."""

    def __init__(self, inner: SpanExporter, redactor: Redactor | None = None):
        self.inner = inner
        self._redactor = redactor
        self.failed_spans = 0
        self.exported_spans = 0
        self._lock = threading.Lock()
        self._resources: dict[int, Any] = {}
        self._in_flight = 0
        self._told = 0  # spans lost when the user was last told (one warning, a tally only if more)
        self.pending: Any = None  # set by the batch processor: () -> spans it never handed over

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        redactor = self._redactor or get_redactor()
        try:
            shareable = [redact_span(s, redactor, self._resources) for s in spans]
        except Exception as exc:
            report_once("forward.redact", "otel-agent-trace: redaction failed, spans not forwarded: %r", exc)
            return SpanExportResult.FAILURE
        self._in_flight = len(spans)
        try:
            with own_io():
                result = self.inner.export(shareable)
        except Exception as exc:
            result = SpanExportResult.FAILURE
            report_once("forward.raise", "otel-agent-trace: the OTLP exporter raised: %r", exc)
        with self._lock:
            self._in_flight = 0
            if result is SpanExportResult.SUCCESS:
                self.exported_spans += len(spans)
            else:
                self.failed_spans += len(spans)
            first = result is not SpanExportResult.SUCCESS and not self._told
            if first:
                self._told = self.failed_spans
        if first:
            from .quiet import last_reason

            logger.warning(
                "otel-agent-trace: could not forward %d span(s) to the OTLP backend (%s: %s); the local "
                "session is complete. Later failures are counted and reported at exit.",
                len(spans),
                type(self.inner).__name__,
                last_reason() or "export failed",
            )
        return result

    def shutdown(self) -> None:
        try:
            with own_io():
                self.inner.shutdown()
        finally:
            pending = 0
            if self.pending is not None:
                try:
                    pending = int(self.pending())
                except Exception:
                    pending = 0
            with self._lock:
                lost = self.failed_spans + self._in_flight + pending
                told, self._told = self._told, max(self._told, lost, 1)  # an export still running stays quiet
            if lost > told:  # nothing new since the first warning: say nothing more
                logger.warning(
                    "otel-agent-trace: %d span(s) were not forwarded to the OTLP backend (%d were); "
                    "the local session is complete.",
                    lost,
                    self.exported_spans,
                )

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with own_io():
            return self.inner.force_flush(timeout_millis)


class ForwardingSpanProcessor(BatchSpanProcessor):
    """The SDK's batch processor, bounded for agents: a full queue drops spans (counted, reported
    once, never blocking), and shutdown waits at most ``OTEL_BSP_EXPORT_TIMEOUT`` (the SDK itself
    waits up to 30 s and then for the exporter's own retries)."""

    def __init__(self, exporter: Any, **kwargs: Any):
        from .quiet import hold_back_logs_of

        super().__init__(exporter, **kwargs)
        hold_back_logs_of(getattr(exporter, "inner", exporter))
        self.dropped_spans = 0
        timeout = kwargs.get("export_timeout_millis")
        self.export_timeout_millis = timeout or self._default_export_timeout_millis()
        if hasattr(exporter, "pending"):
            exporter.pending = self._unsent

    def on_end(self, span: ReadableSpan) -> None:
        batch = self._batch_processor
        queue = getattr(batch, "_queue", None)
        if queue is not None and len(queue) >= getattr(batch, "_max_queue_size", 1 << 62):
            self.dropped_spans += 1  # the SDK would log a warning for each one
            report_once(
                "forward.queue_full",
                "otel-agent-trace: the OTLP backend is not keeping up; spans beyond the queue "
                "(OTEL_BSP_MAX_QUEUE_SIZE) are dropped from forwarding. The local session is complete.",
            )
            return
        super().on_end(span)

    def _unsent(self) -> int:
        """Spans never handed to the exporter: dropped at a full queue, or still queued at exit."""
        return self.dropped_spans + len(getattr(self._batch_processor, "_queue", ()) or ())

    def shutdown(self) -> None:
        self._batch_processor.shutdown(timeout_millis=self.export_timeout_millis)
