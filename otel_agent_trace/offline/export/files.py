"""Recordings as files a viewer loads without a live pipeline: OTLP/JSON lines (what the
Collector's ``otlpjsonfile`` receiver and Jaeger's UI read), each line a request as the OTLP
exporters encode it, and Jaeger's own JSON."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import IO, Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent_trace.redaction import Redactor, get_redactor

from .resource import resource_attributes
from .spans import ExportSpan, SessionSpans

_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """One request in the OTLP/JSON encoding: lowerCamelCase keys, ids as hex (not base64), enums
    as integers, 64-bit integers as decimal strings."""
    return _hex_ids(MessageToDict(request, use_integers_for_enums=True))


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def write_otlp_json(requests: Iterable[tuple[ExportTraceServiceRequest, int]], out: IO[str]) -> int:
    """Write one ``ExportTraceServiceRequest`` per line; returns the number of spans written."""
    spans = 0
    for request, count in requests:
        out.write(json.dumps(otlp_json(request), separators=(",", ":"), ensure_ascii=False))
        out.write("\n")
        spans += count
    return spans


# --- Jaeger's JSON (the query API's shape; Search → "JSON File" in its UI) --------------------


def _tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int) and -(1 << 63) <= value < (1 << 63):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    if isinstance(value, str):
        return {"key": key, "type": "string", "value": value}
    return {"key": key, "type": "string", "value": json.dumps(value, ensure_ascii=False, default=str)}


def _jaeger_span(span: ExportSpan, redactor: Redactor) -> dict[str, Any]:
    end = span.end_ns if span.end_ns is not None else span.start_ns
    tags = [_tag(k, v) for k, v in redactor.redact_attributes(span.attributes).items()]
    tags.append(_tag("span.kind", span.kind.lower()))
    code = span.status.get("code")
    if code and code != "UNSET":
        tags.append(_tag("otel.status_code", code))
    if code == "ERROR":
        tags.append(_tag("error", True))
        if span.status.get("description"):
            description = redactor.redact_text(str(span.status["description"]))
            tags.append(_tag("otel.status_description", description))
    logs = []
    for event in span.events:
        attrs = event.get("attributes")
        attrs = attrs if isinstance(attrs, dict) else {}
        fields = [_tag("event", redactor.redact_text(str(event.get("name") or "")))]
        fields += [_tag(k, v) for k, v in redactor.redact_attributes(attrs).items()]
        logs.append({"timestamp": int(event.get("ts") or 0) // 1000, "fields": fields})
    references = []
    if span.parent_span_id:
        references.append({"refType": "CHILD_OF", "traceID": span.trace_id, "spanID": span.parent_span_id})
    return {
        "traceID": span.trace_id,
        "spanID": span.span_id,
        "operationName": redactor.redact_text(span.name),
        "references": references,
        "startTime": span.start_ns // 1000,
        "duration": max(end - span.start_ns, 0) // 1000,
        "tags": tags,
        "logs": logs,
        "processID": "p1",
        "warnings": None,
    }


def jaeger_json(session: SessionSpans, service_name: str | None = None) -> dict[str, Any]:
    """The session as Jaeger's ``{"data": [trace, …]}``, one entry per trace id (the spans are
    held: Jaeger's JSON is one document)."""
    redactor = get_redactor()
    process_tags = redactor.redact(resource_attributes(session, service_name))
    service = str(process_tags.pop("service.name"))
    process = {"serviceName": service, "tags": [_tag(k, v) for k, v in process_tags.items()]}
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in session.spans:
        traces.setdefault(span.trace_id, []).append(_jaeger_span(span, redactor))
    return {
        "data": [
            {"traceID": trace_id, "spans": spans, "processes": {"p1": process}, "warnings": None}
            for trace_id, spans in traces.items()
        ]
    }
