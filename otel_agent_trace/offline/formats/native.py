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


class Normalizer:
    """Checks one file's entries (they are returned as they are)."""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        text(raw, "id", required=True)
        if not raw["id"]:
            raise BadEntry("empty 'id'")
        if raw.get("parent_id") is None:
            raw["parent_id"] = ""
        text(raw, "parent_id")
        kind = text(raw, "type", required=True)
        text(raw, "layer")
        integer(raw, "ts", required=True)
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
