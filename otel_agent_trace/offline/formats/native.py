"""Our own format (``otel-agent-trace/session``): entries are checked, not changed, so a field
with a wrong type is an error naming file and line here rather than a traceback later."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import session_format as fmt

from ._checks import BadEntry, integer, mapping, strings, text

NAME = "otel-agent-trace"
END_TYPES = frozenset({fmt.SESSION_END})
SNAPSHOT_TYPES = frozenset({fmt.SNAPSHOT})
_SPANS = frozenset({fmt.SPAN_START, fmt.SPAN_END, fmt.SPAN_EVENT})
_ROOTS = frozenset({fmt.SESSION_START, fmt.SESSION_JOIN})
_READS_MAJOR = int(fmt.FORMAT_VERSION.split(".")[0])


def matches(raw: dict[str, Any]) -> bool:
    return "type" in raw and "id" in raw


def check_version(version: Any) -> None:
    """Refuse a format version this reader does not know (a newer major version)."""
    if version is None:
        return
    if not isinstance(version, str):
        raise BadEntry(f"format_version is {type(version).__name__}, not a string")
    major = version.split(".")[0]
    if not major.isdigit():
        raise BadEntry(f"unknown format version {version[:40]!r}")
    if int(major) > _READS_MAJOR:
        raise BadEntry(f"format version {version} is newer than this reader ({fmt.FORMAT_VERSION})")


_OPTIONAL_TEXT = ("layer", "trace_id", "parent_span_id", "name", "kind")


def _well_typed(raw: dict[str, Any]) -> bool:
    """The common case, checked fast: a span or message entry whose fields all have their types.
    Anything else (or anything wrong) goes through the full checks, which name the field."""
    get = raw.get
    if type(get("id")) is not str or type(get("parent_id")) is not str or type(get("ts")) is not int:
        return False
    kind = get("type")
    if kind == fmt.MESSAGE:
        role = get("role")
        return role is None or type(role) is str
    if kind not in _SPANS or type(get("span_id")) is not str or not raw["id"]:
        return False
    for key in _OPTIONAL_TEXT:
        value = get(key)
        if value is not None and type(value) is not str:
            return False
    attributes = get("attributes")
    if attributes is not None and type(attributes) is not dict:
        return False
    if kind != fmt.SPAN_END:
        return True
    duration, status, content = get("duration_ns"), get("status"), get("content")
    if duration is not None and type(duration) is not int:
        return False
    if status is not None and (type(status) is not dict or type(status.get("code", "")) is not str):
        return False
    if status is not None and type(status.get("description", "")) is not str:
        return False
    if content is None:
        return True
    if type(content) is not dict:
        return False
    for key in ("input_message_ids", "output_message_ids"):
        ids = content.get(key)
        if ids is not None and (type(ids) is not list or not all(type(i) is str for i in ids)):
            return False
    return True


class Normalizer:
    """Checks one file's entries (they are returned as they are)."""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        if _well_typed(raw):
            return raw
        text(raw, "id", required=True)
        if not raw["id"]:
            raise BadEntry("empty 'id'")
        if raw.get("parent_id") is None:
            raw["parent_id"] = ""
        text(raw, "parent_id")
        kind = text(raw, "type", required=True)
        text(raw, "layer")
        raw["ts"] = integer(raw, "ts", required=True)
        if kind in _SPANS:
            _check_span(raw, kind)
        elif kind in _ROOTS:
            metadata = mapping(raw, "metadata")
            text(raw, "session_id")
            text(raw, "tier")
            if metadata:
                check_version(metadata.get("format_version"))
        elif kind == fmt.SNAPSHOT:
            strings(raw, "message_ids")
            integer(raw, "snapshot_id")
        elif kind == fmt.SESSION_END:
            integer(raw, "duration_ns")
            mapping(raw, "counts")
        elif kind == fmt.MESSAGE:
            text(raw, "role")
        return raw


def _check_span(raw: dict[str, Any], kind: str) -> None:
    text(raw, "span_id", required=True)
    text(raw, "trace_id")
    text(raw, "parent_span_id")
    text(raw, "name")
    text(raw, "kind")
    mapping(raw, "attributes")
    if kind == fmt.SPAN_END:
        integer(raw, "duration_ns")
        status = mapping(raw, "status")
        if status:
            text(status, "code")
            if not isinstance(status.get("description", ""), (str, type(None))):
                status["description"] = str(status["description"])
        content = mapping(raw, "content")
        if content:
            strings(content, "input_message_ids")
            strings(content, "output_message_ids")
