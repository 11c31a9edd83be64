"""Forwarding to OTLP backends: the stream is shareable, so spans are redacted on the way out,
and a backend that is down is counted and reported once, never raised.

Every exporter our configurator sets up other than the session files (``otlp``, ``console``, …)
is wrapped, so spans of any instrumentation, ours or a third party's, are redacted alike. Message
text follows ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``: with it on, it is redacted
like everything else; off (the default), message text a framework put on its own spans or events
(the keys :mod:`otel_agent_trace.message_text` names) leaves as its length and SHA-256 only.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from otel_agent_trace._internal.guard import logger, own_io, report_once
from otel_agent_trace.message_text import without_text
from otel_agent_trace.redaction import Redactor, get_redactor
from otel_agent_trace.settings import get_settings

from . import quiet

# Once the backend has been seen failing, exit waits at most this long for it (seconds).
FAILING_EXIT_SECONDS = 2.0


def redact_span(
    span: ReadableSpan,
    redactor: Redactor,
    resources: dict[int, Any] | None = None,
    *,
    keep_text: bool = False,
) -> ReadableSpan:
    """A copy of ``span`` with its name, attributes, events, links, status description and
    resource attributes redacted (``resources`` caches redacted resources by identity). Without
    ``keep_text`` (content capture off) message text in attributes and events is first reduced
    to ``<content chars=N sha256=…>``."""
    attrs = span.attributes
    if attrs and not keep_text:
        attrs = without_text(attrs, as_text=True)
    return ReadableSpan(
        name=redactor.redact_text(span.name),
        context=span.context,
        parent=span.parent,
        resource=_redacted_resource(span.resource, redactor, resources),
        attributes=redactor.redact_attributes(attrs) if attrs else attrs,
        events=[_redacted_event(e, redactor, keep_text) for e in span.events],
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


def _redacted_event(event: Event, redactor: Redactor, keep_text: bool) -> Event:
    attrs = event.attributes
    if attrs and not keep_text:
        attrs = without_text(attrs, event.name, as_text=True)
    return Event(
        redactor.redact_text(event.name), redactor.redact(dict(attrs)) if attrs else attrs, event.timestamp
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
    """Wraps any exporter: redacts each span, counts what was sent and what failed, notes when
    the backend was first seen failing, and tells the user once."""

    def __init__(self, inner: SpanExporter, redactor: Redactor | None = None, keep_text: bool | None = None):
        self.inner = inner
        self._redactor = redactor
        self._keep_text = keep_text  # None: as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT says
        self.failed_spans = 0
        self.exported_spans = 0
        self._lock = threading.RLock()  # (re-entered by a SIGTERM handler on the thread holding it)
        self._resources: dict[int, Any] = {}
        self._told = False
        self._closed = False
        self._reported = False
        self.exiting = False  # set at shutdown: the report at exit is then the only message
        self.failing_since: float | None = None  # monotonic time of the first failure since a success

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        redactor = self._redactor or get_redactor()
        keep_text = self._keep_text
        try:
            if keep_text is None:
                keep_text = get_settings().content_captured
            shareable = [redact_span(s, redactor, self._resources, keep_text=keep_text) for s in spans]
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
                self.failing_since = None
                quiet.note_success()
            else:
                self.failed_spans += len(spans)
                if self.failing_since is None:
                    self.failing_since = time.monotonic()
            first = result is not SpanExportResult.SUCCESS and not (
                self._told or self.exiting or self._closed
            )
            if first:
                self._told = True
        if first:
            logger.warning(
                "otel-agent-trace: could not forward %d span(s) to the OTLP backend (%s: %s); the local "
                "session is complete. Later failures are counted and reported at exit.",
                len(spans),
                type(self.inner).__name__,
                quiet.last_reason() or "export failed",
            )
        return result

    def seen_failing(self) -> float | None:
        """When the backend was first seen failing since it last took spans (``None``: it was not):
        a failed export, or a retry the exporter logged while an export is still under way."""
        since = quiet.failing_since()
        if self.failing_since is not None and (since is None or self.failing_since < since):
            since = self.failing_since
        return since

    def close(self) -> None:
        """Stop the inner exporter (once): interrupts its retry waits; nothing is logged after."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            with own_io():
                self.inner.shutdown()
        except Exception:  # pragma: no cover - an exporter that fails to close changes nothing
            pass

    def report(self, received: int) -> None:
        """The last word at exit: how many of the ``received`` spans never reached the backend."""
        with self._lock:
            if self._reported:
                return
            self._reported = True
            exported = self.exported_spans
        lost = max(received - exported, 0)
        quiet.silence()  # an export still running in the background stays quiet from now on
        if lost:
            logger.warning(
                "otel-agent-trace: %d of %d span(s) were not forwarded to the OTLP backend (%s); "
                "the local session is complete.",
                lost,
                received,
                quiet.last_reason() or ("export failed" if self.failed_spans else "not sent before exit"),
            )

    def shutdown(self) -> None:
        self.close()
        if not self.exiting:  # else our processor is shutting down: it reports, knowing what it took
            self.report(self.exported_spans + self.failed_spans)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with own_io():
            return self.inner.force_flush(timeout_millis)


class ForwardingSpanProcessor(BatchSpanProcessor):
    """The SDK's batch processor, bounded for agents: a full queue drops spans (counted, reported
    once, never blocking), and shutdown waits at most ``OTEL_BSP_EXPORT_TIMEOUT``, and at most
    :data:`FAILING_EXIT_SECONDS` once the backend has been seen failing (the local session is the
    record; the SDK itself would wait up to 30 s and then for the exporter's own retries)."""

    def __init__(self, exporter: Any, **kwargs: Any):
        super().__init__(exporter, **kwargs)
        quiet.hold_back_logs_of(getattr(exporter, "inner", exporter))
        self._forwarder = exporter
        self.dropped_spans = 0
        self.received_spans = 0
        self._closed = False
        self._close_lock = threading.RLock()  # (re-entered by a SIGTERM handler on the thread holding it)
        self.export_timeout_millis = kwargs.get("export_timeout_millis") or _export_timeout_millis()

    def _queue_state(self) -> tuple[Any, int]:
        """The queue and its bound, on every SDK version (1.30 keeps them on the processor itself)."""
        batch = getattr(self, "_batch_processor", None)
        if batch is not None:
            return getattr(batch, "_queue", None), getattr(batch, "_max_queue_size", 1 << 62)
        return getattr(self, "queue", None), getattr(self, "max_queue_size", 1 << 62)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            ctx = span.context
            if self._closed or ctx is None or not ctx.trace_flags.sampled:
                return
            queue, bound = self._queue_state()
            self.received_spans += 1
            if queue is not None and len(queue) >= bound:
                self.dropped_spans += 1  # the SDK would log a warning for each one
                report_once(
                    "forward.queue_full",
                    "otel-agent-trace: the OTLP backend is not keeping up; spans beyond the queue "
                    "(OTEL_BSP_MAX_QUEUE_SIZE) are dropped from forwarding. The local session is complete.",
                )
                return
            super().on_end(span)
        except Exception as exc:  # never raise into span.end()
            report_once("forward.on_end", "otel-agent-trace: forwarding a span failed: %r", exc)

    def shutdown(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        started = time.monotonic()
        deadline = started + self.export_timeout_millis / 1000
        forwarder = self._forwarder
        if hasattr(forwarder, "exiting"):
            forwarder.exiting = True
        drain = threading.Thread(target=self._drain, name="otel-agent-trace-forward-exit", daemon=True)
        drain.start()
        seen = getattr(forwarder, "seen_failing", None)
        while drain.is_alive():
            limit = deadline
            failing = seen() if seen is not None else None
            if failing is not None:
                limit = min(deadline, max(started, failing) + FAILING_EXIT_SECONDS)
            now = time.monotonic()
            if now >= limit:
                break
            drain.join(min(0.05, limit - now))
        if hasattr(forwarder, "close"):
            forwarder.close()  # interrupts a retry still waiting; what is left is not sent
            forwarder.report(self.received_spans)

    def _drain(self) -> None:
        """Send what is queued (the SDK's own shutdown), on a thread the caller can stop waiting for."""
        try:
            batch = getattr(self, "_batch_processor", None)
            if batch is not None:
                batch.shutdown(timeout_millis=self.export_timeout_millis)
            else:  # SDK < 1.31: its shutdown has no bound, hence this thread
                super().shutdown()
        except Exception as exc:  # pragma: no cover - best effort on the way out
            report_once("forward.shutdown", "otel-agent-trace: forwarding at exit failed: %r", exc)


def _export_timeout_millis() -> float:
    """``OTEL_BSP_EXPORT_TIMEOUT`` as the SDK reads it (30 s when unset or invalid)."""
    try:
        value = float(os.environ.get("OTEL_BSP_EXPORT_TIMEOUT", "30000"))
    except ValueError:
        return 30000.0
    return value if value > 0 else 30000.0
