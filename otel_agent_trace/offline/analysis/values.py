"""Values read from a session's entries, defensively: a field of the wrong type counts as missing
(an empty text, 0, an empty object), and a value shown to a reader is cut to a short preview."""

from __future__ import annotations

from typing import Any

import orjson

from otel_agent_trace import semconv

from ..jsonvalue import JSONObject, JSONValue
from . import classify as cls

PREVIEW = 160

_OP = semconv.GEN_AI_OPERATION_NAME


def as_object(value: JSONValue) -> JSONObject:
    return value if isinstance(value, dict) else {}


def as_int(value: JSONValue) -> int:
    return value if type(value) is int else 0


def as_text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def preview(value: JSONValue, limit: int = PREVIEW) -> str:
    """A short one-line text of a value read from a file (JSON for structures)."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = orjson.dumps(value).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def name_of(entry: dict[str, Any]) -> str:
    name = entry.get("name")
    return name if type(name) is str else as_text(name)


def id_of(entry: dict[str, Any]) -> str:
    eid = entry.get("id")
    return eid if type(eid) is str else as_text(eid)


def error_text(attrs: JSONValue, status: JSONValue) -> str:
    """The text of a span's error: its ``error.type`` and status description."""
    why = as_text(attrs.get(semconv.ERROR_TYPE)) if type(attrs) is dict else ""
    desc = as_text(status.get("description")) if type(status) is dict else ""
    return f"{why}: {desc}" if why and desc and not desc.startswith(why) else desc or why or "error"


def open_span(entry: dict[str, Any]) -> tuple[str, str, str, int, str]:
    """``(name, layer, kind, start ts, entry id)`` of a running span from its start entry."""
    attrs: JSONValue = entry.get("attributes")
    op = attrs.get(_OP) if type(attrs) is dict else None
    name = as_text(entry.get("name"))
    layer = as_text(entry.get("layer"))
    ts = entry.get("ts")
    return (
        name,
        layer,
        cls.start_kind(name, layer, op),
        ts if type(ts) is int else 0,
        as_text(entry.get("id")),
    )
