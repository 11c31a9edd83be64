"""Recordings as files a viewer loads without a live pipeline: OTLP/JSON lines (what the
Collector's ``otlpjsonfile`` receiver reads), each line a request as the OTLP exporters encode it,
and Jaeger's own JSON (what Jaeger's UI uploads: one document, whatever the session's size; its
OTLP upload takes one request only, so not the lines of a session of more than one batch)."""

from __future__ import annotations

import base64
import json
import tempfile
from array import array
from collections.abc import Iterable
from typing import IO, Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent_trace.redaction import Redactor, get_redactor

from ..jsonvalue import JSONObject, JSONValue
from .resource import resource_attributes
from .spans import ExportSpan, SessionSpans

_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_json(request: ExportTraceServiceRequest) -> JSONObject:
    """One request in the OTLP/JSON encoding: lowerCamelCase keys, ids as hex (not base64), enums
    as integers, 64-bit integers as decimal strings."""
    return _hex_object(MessageToDict(request, use_integers_for_enums=True))


def _hex_object(node: JSONObject) -> JSONObject:
    return {
        k: base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v)
        for k, v in node.items()
    }


def _hex_ids(node: JSONValue) -> JSONValue:
    if isinstance(node, dict):
        return _hex_object(node)
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
    logs: list[dict[str, Any]] = []
    for event in span.events:
        attrs: JSONValue = event.get("attributes")
        attrs = attrs if isinstance(attrs, dict) else {}
        fields = [_tag("event", redactor.redact_text(str(event.get("name") or "")))]
        fields += [_tag(k, v) for k, v in redactor.redact_attributes(attrs).items()]
        logs.append({"timestamp": int(event.get("ts") or 0) // 1000, "fields": fields})
    references: list[dict[str, str]] = []
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


def write_jaeger_json(session: SessionSpans, out: IO[str], service_name: str | None = None) -> int:
    """Write the session as Jaeger's ``{"data": [trace, …]}``, one entry per trace id; returns
    the number of spans written (nothing is written when there are none).

    Streamed in bounded memory: each span is encoded as it is read and spooled to a temporary file
    (:data:`tempfile.tempdir`), only its offset kept (8 bytes a span), then the document is written
    trace by trace from the spool."""
    redactor = get_redactor()
    process_tags = redactor.redact(resource_attributes(session, service_name))
    service = str(process_tags.pop("service.name"))
    process = {"serviceName": service, "tags": [_tag(k, v) for k, v in process_tags.items()]}
    traces: dict[str, array[int]] = {}
    count = 0
    with tempfile.TemporaryFile("w+b") as spool:
        for span in session.spans:
            offsets = traces.get(span.trace_id)
            if offsets is None:
                offsets = traces[span.trace_id] = array("q")
            offsets.append(spool.tell())
            spool.write(_dumps(_jaeger_span(span, redactor)).encode() + b"\n")
            count += 1
        if not count:
            return 0
        processes = _dumps({"p1": process})
        out.write('{"data":[')
        for number, (trace_id, offsets) in enumerate(traces.items()):
            out.write(f'{"," if number else ""}{{"traceID":{_dumps(trace_id)},"spans":[')
            at = -1
            for index, offset in enumerate(offsets):
                if offset != at:
                    spool.seek(offset)
                line = spool.readline()
                at = offset + len(line)
                out.write(("," if index else "") + line[:-1].decode())
            out.write(f'],"processes":{processes},"warnings":null}}')
        out.write("]}\n")
    return count


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
