"""Export spans as the SDK's ``ReadableSpan``: what the OTLP exporters send and the OTLP encoder
(``opentelemetry.exporter.otlp.proto.common``) writes. Ids, parents, times, kinds, events and
statuses are the recorded ones; names and attributes are redacted as the shareable tier is.

Loads the OpenTelemetry SDK: imported only when a session is exported (never by
``otel_agent_trace.offline`` or the CLI at import).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AnyValue

from otel_agent_trace._version import __version__
from otel_agent_trace.redaction import Redactor, get_redactor

from ..jsonvalue import JSONValue
from .resource import resource_attributes
from .spans import ExportSpan, SessionSpans

SCOPE_NAME = "otel-agent-trace.export"
MAX_BATCH_SPANS = 512
MAX_BATCH_BYTES = 3 << 20  # under gRPC's default 4 MiB message limit
_INT64 = (-(1 << 63), (1 << 63) - 1)
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def attribute_value(value: AnyValue) -> AnyValue:
    """A JSON value of an entry as an OTLP attribute value: nested lists and maps kept, an
    integer outside int64 as its decimal text."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else str(value)
    if isinstance(value, (list, tuple)):
        return [attribute_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): attribute_value(v) for k, v in value.items()}
    return str(value)


def _attributes(values: Mapping[str, Any], redactor: Redactor, dropped: int = 0) -> Mapping[str, Any]:
    out = {str(k): attribute_value(v) for k, v in redactor.redact_attributes(dict(values)).items()}
    if not dropped:
        return out
    bounded = BoundedAttributes(maxlen=None, attributes=out, immutable=False)
    bounded.dropped = dropped
    return bounded


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _event(event: dict[str, Any], redactor: Redactor) -> Event:
    attributes: JSONValue = event.get("attributes")
    return Event(
        name=redactor.redact_text(str(event.get("name") or "")),
        attributes=_attributes(attributes, redactor) if isinstance(attributes, dict) else None,
        timestamp=_int(event.get("ts")),
    )


class SpanBuilder:
    """Builds the ``ReadableSpan`` of each export span of one session (one resource, one scope)."""

    def __init__(
        self, session: SessionSpans, service_name: str | None = None, redactor: Redactor | None = None
    ) -> None:
        self.redactor = redactor or get_redactor()
        self.resource = Resource(dict(self.redactor.redact(resource_attributes(session, service_name))))
        self.scope = InstrumentationScope(SCOPE_NAME, __version__)

    def __call__(self, span: ExportSpan) -> ReadableSpan:
        redactor = self.redactor
        trace_id = int(span.trace_id, 16)
        events: Sequence[Event] = [_event(event, redactor) for event in span.events]
        if dropped_events := _int(span.dropped.get("events")):
            events = BoundedList[Event].from_seq(None, events)
            events.dropped = dropped_events
        code = str(span.status.get("code") or "UNSET")
        status = Status(
            StatusCode.ERROR if code == "ERROR" else StatusCode.OK if code == "OK" else StatusCode.UNSET
        )
        if code == "ERROR" and span.status.get("description"):
            status = Status(StatusCode.ERROR, redactor.redact_text(str(span.status["description"])))
        parent = None
        if span.parent_span_id:
            parent = SpanContext(
                trace_id, int(span.parent_span_id, 16), is_remote=False, trace_flags=_SAMPLED
            )
        start = max(span.start_ns, 0)
        return ReadableSpan(
            name=redactor.redact_text(span.name),
            context=SpanContext(trace_id, int(span.span_id, 16), is_remote=False, trace_flags=_SAMPLED),
            parent=parent,
            resource=self.resource,
            attributes=_attributes(span.attributes, redactor, _int(span.dropped.get("attributes"))),
            events=events,
            kind=SpanKind[span.kind] if span.kind in SpanKind.__members__ else SpanKind.INTERNAL,
            status=status,
            start_time=start,
            end_time=max(span.end_ns if span.end_ns is not None else start, 0),
            instrumentation_scope=self.scope,
        )


def size_of(value: AnyValue) -> int:
    """About the bytes ``value`` takes in an OTLP message (its text, a few bytes of framing)."""
    if isinstance(value, str):
        return len(value) + 4
    if isinstance(value, Mapping):
        return sum(len(str(k)) + size_of(v) + 4 for k, v in value.items()) + 4
    if isinstance(value, (list, tuple)):
        return sum(size_of(v) for v in value) + 4
    return 12


def _span_size(span: ReadableSpan) -> int:
    events = sum(len(e.name) + size_of(e.attributes or {}) + 16 for e in span.events)
    return len(span.name) + size_of(span.attributes or {}) + events + 64


def readable_batches(
    session: SessionSpans,
    *,
    service_name: str | None = None,
    max_spans: int = MAX_BATCH_SPANS,
    max_bytes: int = MAX_BATCH_BYTES,
    redactor: Redactor | None = None,
) -> Iterator[list[ReadableSpan]]:
    """The session's spans as ``ReadableSpan`` batches of at most ``max_spans`` and about
    ``max_bytes`` (streamed; a span bigger than that goes alone)."""
    build = SpanBuilder(session, service_name, redactor)
    batch: list[ReadableSpan] = []
    size = 0
    for span in map(build, session.spans):
        span_size = _span_size(span)
        if batch and (len(batch) >= max_spans or size + span_size > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(span)
        size += span_size
    if batch:
        yield batch


def build_requests(
    session: SessionSpans, *, service_name: str | None = None, max_spans: int = MAX_BATCH_SPANS
) -> Iterator[tuple[ExportTraceServiceRequest, int]]:
    """``(request, span_count)``: the session as the OTLP exporters encode it, batch by batch."""
    for batch in readable_batches(session, service_name=service_name, max_spans=max_spans):
        yield encode_spans(batch), len(batch)
