"""OTLP protobuf messages built directly from session spans (no SDK): ids, times, kinds, events
and statuses as recorded, names and attributes redacted as the shareable tier is."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from otel_agent_trace._version import __version__
from otel_agent_trace.redaction import Redactor, get_redactor

from .spans import ExportSpan, SessionSpans

SCOPE_NAME = "otel-agent-trace.export"
DEFAULT_SERVICE_NAME = "otel-agent-trace"
MAX_BATCH_SPANS = 512
MAX_BATCH_BYTES = 3 << 20  # under gRPC's default 4 MiB message limit

_KINDS = {
    "INTERNAL": Span.SPAN_KIND_INTERNAL,
    "SERVER": Span.SPAN_KIND_SERVER,
    "CLIENT": Span.SPAN_KIND_CLIENT,
    "PRODUCER": Span.SPAN_KIND_PRODUCER,
    "CONSUMER": Span.SPAN_KIND_CONSUMER,
}
_STATUS = {"UNSET": Status.STATUS_CODE_UNSET, "OK": Status.STATUS_CODE_OK, "ERROR": Status.STATUS_CODE_ERROR}
_INT64 = (-(1 << 63), (1 << 63) - 1)


def any_value(value: Any) -> AnyValue:
    """A JSON value of a session entry as an OTLP ``AnyValue`` (nested lists and maps kept)."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return AnyValue(int_value=value)
        return AnyValue(string_value=str(value))
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[any_value(v) for v in value]))
    if isinstance(value, Mapping):
        return AnyValue(kvlist_value=KeyValueList(values=key_values(value)))
    if value is None:
        return AnyValue()
    return AnyValue(string_value=str(value))


def key_values(attributes: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=str(k), value=any_value(v)) for k, v in attributes.items()]


def resource_attributes(session: SessionSpans, service_name: str | None = None) -> dict[str, Any]:
    """What the backend shows as the process: service name, session id, host, pid."""
    meta = session.metadata
    attrs: dict[str, Any] = {
        "service.name": service_name or DEFAULT_SERVICE_NAME,
        "session.id": session.session_id,
        "agent_trace.session.id": session.session_id,
        "agent_trace.tier": session.tier,
    }
    if meta.get("hostname"):
        attrs["host.name"] = meta["hostname"]
    if isinstance(meta.get("pid"), int):
        attrs["process.pid"] = meta["pid"]
    if isinstance(meta.get("argv"), list):
        attrs["process.command_args"] = [str(a) for a in meta["argv"]]
    attrs["telemetry.sdk.name"] = "otel-agent-trace"
    attrs["telemetry.sdk.version"] = __version__
    return attrs


def proto_span(span: ExportSpan, redactor: Redactor) -> Span:
    """One recorded span as an OTLP ``Span`` (redacted)."""
    out = Span(
        trace_id=bytes.fromhex(span.trace_id),
        span_id=bytes.fromhex(span.span_id),
        name=redactor.redact_text(span.name),
        kind=_KINDS.get(span.kind, Span.SPAN_KIND_INTERNAL),  # type: ignore[arg-type]
        start_time_unix_nano=max(span.start_ns, 0),
        end_time_unix_nano=max(span.end_ns if span.end_ns is not None else span.start_ns, 0),
        attributes=key_values(redactor.redact_attributes(span.attributes)) if span.attributes else (),
    )
    if span.parent_span_id:
        out.parent_span_id = bytes.fromhex(span.parent_span_id)
    for event in span.events:
        attrs = event.get("attributes")
        out.events.append(
            Span.Event(
                time_unix_nano=int(event.get("ts") or 0),
                name=redactor.redact_text(str(event.get("name") or "")),
                attributes=key_values(redactor.redact_attributes(attrs)) if isinstance(attrs, dict) else (),
            )
        )
    code = str(span.status.get("code") or "UNSET")
    description = span.status.get("description")
    out.status.code = _STATUS.get(code, Status.STATUS_CODE_UNSET)  # type: ignore[assignment]
    if description and out.status.code == Status.STATUS_CODE_ERROR:
        out.status.message = redactor.redact_text(str(description))
    out.dropped_attributes_count = int(span.dropped.get("attributes") or 0)
    out.dropped_events_count = int(span.dropped.get("events") or 0)
    return out


def build_requests(
    session: SessionSpans,
    *,
    service_name: str | None = None,
    max_spans: int = MAX_BATCH_SPANS,
    max_bytes: int = MAX_BATCH_BYTES,
    redactor: Redactor | None = None,
) -> Iterator[tuple[ExportTraceServiceRequest, int]]:
    """``(request, span_count)`` batches of at most ``max_spans`` spans and about ``max_bytes``."""
    redactor = redactor or get_redactor()
    resource = Resource(attributes=key_values(redactor.redact(resource_attributes(session, service_name))))
    scope = InstrumentationScope(name=SCOPE_NAME, version=__version__)
    spans = (proto_span(s, redactor) for s in session.spans)
    yield from _batches(spans, resource, scope, max_spans, max_bytes)


def _batches(
    spans: Iterable[Span], resource: Resource, scope: InstrumentationScope, max_spans: int, max_bytes: int
) -> Iterator[tuple[ExportTraceServiceRequest, int]]:
    batch: list[Span] = []
    size = 0
    for span in spans:
        span_size = span.ByteSize()
        if batch and (len(batch) >= max_spans or size + span_size > max_bytes):
            yield _request(batch, resource, scope), len(batch)
            batch, size = [], 0
        batch.append(span)
        size += span_size
    if batch:
        yield _request(batch, resource, scope), len(batch)


def _request(spans: list[Span], resource: Resource, scope: InstrumentationScope) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(resource=resource, scope_spans=[ScopeSpans(scope=scope, spans=spans)])]
    )
