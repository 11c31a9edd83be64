"""Entry checks: what every reader of the format may count on after a line is read, said once.

A field of ours with a wrong type (``id``, ``parent_id`` or ``type`` a list, ``ts`` a string,
``attributes`` not an object, …) is a :class:`BadEntry`, which the reader turns into a
``SessionFormatError`` naming file and line (or, read leniently, a skipped line). Span attributes
are the instrumented code's (OpenTelemetry lets any attribute be any primitive or list): those the
readers interpret (:data:`INTERPRETED_ATTRIBUTES`) with another type are treated as absent —
dropped from the entry as it is read, so no reader sees them — never an error.
``docs/session-format.md`` ("Reading rules") documents both.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

from .schema import (
    FORMAT_VERSION,
    MESSAGE,
    SESSION_END,
    SESSION_JOIN,
    SESSION_START,
    SNAPSHOT,
    SPAN_END,
    SPAN_EVENT,
    SPAN_START,
)


class BadEntry(ValueError):
    """An entry that parses as JSON but not as a session entry; the reader adds file and line."""


# --- one field ------------------------------------------------------------------------------------


def text(raw: dict[str, Any], key: str, *, required: bool = False, default: str | None = None) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise BadEntry(f"no {key!r}")
        return default
    if not isinstance(value, str):
        raise BadEntry(f"{key!r} is {type(value).__name__}, not a string")
    return value


def integer(raw: dict[str, Any], key: str, *, required: bool = False) -> int | None:
    """An integer field; a finite float is taken (rounded down), anything else refused."""
    value = raw.get(key)
    if value is None:
        if required:
            raise BadEntry(f"no {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadEntry(f"{key!r} is {value}, not a finite number")
        return int(value)
    return value


def number(raw: dict[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a finite number")
    return float(value)


def mapping(raw: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, dict):
        raise BadEntry(f"{key!r} is {type(value).__name__}, not an object")
    return cast("dict[str, Any] | None", value)


def strings(raw: dict[str, Any], key: str) -> list[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast("list[Any]", value)):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a list of ids")
    return cast("list[str]", value)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40])
    return type(value).__name__


def flatten(entry: dict[str, Any], data: dict[str, Any] | None) -> dict[str, Any]:
    """A foreign event's own fields beside ours; one whose name is taken stays under ``data``."""
    if not data:
        return entry
    clashes = {k: v for k, v in data.items() if k in entry}
    for key, value in data.items():
        if key not in entry:
            entry[key] = value
    if clashes:
        entry["data"] = clashes
    return entry


# --- attributes the readers interpret ----------------------------------------------------------

_TEXT, _INT, _TEXTS = "text", "int", "texts"
INTERPRETED_ATTRIBUTES: dict[str, str] = {
    # what a span is and what it called
    "gen_ai.operation.name": _TEXT,
    "gen_ai.provider.name": _TEXT,
    "gen_ai.request.model": _TEXT,
    "gen_ai.response.model": _TEXT,
    "gen_ai.agent.name": _TEXT,
    "gen_ai.tool.name": _TEXT,
    "gen_ai.tool.type": _TEXT,
    "gen_ai.tool.call.id": _TEXT,
    "agent_trace.tool.import_path": _TEXT,
    "agent_trace.layer": _TEXT,
    "error.type": _TEXT,
    # how a model call went
    "gen_ai.usage.input_tokens": _INT,
    "gen_ai.usage.output_tokens": _INT,
    "gen_ai.usage.cache_read.input_tokens": _INT,
    "gen_ai.usage.cache_creation.input_tokens": _INT,
    "gen_ai.usage.reasoning.output_tokens": _INT,
    "gen_ai.response.finish_reasons": _TEXTS,
    "agent_trace.tool_calls.names": _TEXTS,
    "agent_trace.tool_calls.ids": _TEXTS,
    # processes, HTTP, files
    "process.executable.path": _TEXT,
    "process.executable.name": _TEXT,
    "process.exit.code": _INT,
    "http.request.method": _TEXT,
    "http.response.status_code": _INT,
    "url.full": _TEXT,
    "server.address": _TEXT,
    "file.path": _TEXT,
    "agent_trace.file.mode": _TEXT,
}
"""Span (and span event) attributes whose values the readers interpret, with the type each must
have (``text``: a string; ``int``: an integer, not a bool; ``texts``: a list of strings;
``process.command_args`` may be a list of strings or one string). A value of another type is
treated as absent (dropped as the entry is read); ``null`` is absent already."""


_TEXT_KEYS = frozenset(k for k, kind in INTERPRETED_ATTRIBUTES.items() if kind == _TEXT)
_INT_KEYS = frozenset(k for k, kind in INTERPRETED_ATTRIBUTES.items() if kind == _INT)
_TEXTS_KEYS = frozenset(k for k, kind in INTERPRETED_ATTRIBUTES.items() if kind == _TEXTS)
_COMMAND_ARGS = "process.command_args"
_INTERPRETED_KEYS = frozenset({*INTERPRETED_ATTRIBUTES, _COMMAND_ARGS})


def _interpreted(attributes: dict[str, Any]) -> None:
    """Drop the interpreted attributes of a wrong type (rarely any: the common case is one set
    intersection, in C, and a class test per interpreted attribute present)."""
    found = _INTERPRETED_KEYS.intersection(attributes)
    if not found:
        return
    wrong = None
    for key in found:
        value = attributes[key]
        cls = value.__class__
        if cls is str:
            if key in _TEXT_KEYS or key == _COMMAND_ARGS:
                continue
        elif cls is int:
            if key in _INT_KEYS:
                continue
        elif cls is list:
            if (key in _TEXTS_KEYS or key == _COMMAND_ARGS) and all(v.__class__ is str for v in value):
                continue
        elif value is None:
            continue
        wrong = [key] if wrong is None else [*wrong, key]
    if wrong:
        for key in wrong:
            del attributes[key]


# --- one entry --------------------------------------------------------------------------------

_SPANS = frozenset({SPAN_START, SPAN_END, SPAN_EVENT})
_ROOTS = frozenset({SESSION_START, SESSION_JOIN})
_READS_MAJOR = int(FORMAT_VERSION.split(".")[0])
_OPTIONAL_TEXT = ("layer", "trace_id", "parent_span_id", "name", "kind")


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
        raise BadEntry(f"format version {version} is newer than this reader ({FORMAT_VERSION})")


def _well_typed(raw: dict[str, Any]) -> bool:
    """The common case, checked fast: a span or message entry whose fields all have their types.
    Anything else (or anything wrong) goes through the full checks, which name the field."""
    get = raw.get
    if type(get("id")) is not str or type(get("parent_id")) is not str or type(get("ts")) is not int:
        return False
    kind = get("type")
    if kind == MESSAGE:
        role = get("role")
        return role is None or type(role) is str
    if kind.__class__ is not str or kind not in _SPANS or type(get("span_id")) is not str or not raw["id"]:
        return False
    for key in _OPTIONAL_TEXT:
        value = get(key)
        if value is not None and type(value) is not str:
            return False
    attributes = get("attributes")
    if attributes is not None:
        if type(attributes) is not dict:
            return False
        _interpreted(cast("dict[str, Any]", attributes))
    if kind != SPAN_END:
        return True
    duration, status, content = get("duration_ns"), get("status"), get("content")
    if duration is not None and type(duration) is not int:
        return False
    if status is not None:
        if type(status) is not dict:
            return False
        fields = cast("dict[str, Any]", status)
        if type(fields.get("code", "")) is not str or type(fields.get("description", "")) is not str:
            return False
    if content is None:
        return True
    if type(content) is not dict:
        return False
    for key in ("input_message_ids", "output_message_ids"):
        ids: list[Any] | None = cast("dict[str, Any]", content).get(key)
        if ids is not None and (type(ids) is not list or not all(type(i) is str for i in ids)):
            return False
    return True


def check_entry(raw: dict[str, Any]) -> dict[str, Any]:
    """An entry of our format as read (after :mod:`.upgrade`), checked: returned as it is but for
    a missing ``parent_id`` (``""``), a float ``ts`` (rounded down), a status description that is
    not a string (made one) and interpreted attributes of a wrong type (dropped); a wrong type of
    one of our fields is a :class:`BadEntry` naming the field."""
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
    elif kind == SNAPSHOT:
        strings(raw, "message_ids")
        integer(raw, "snapshot_id")
    elif kind == SESSION_END:
        integer(raw, "duration_ns")
        mapping(raw, "counts")
    elif kind == MESSAGE:
        text(raw, "role")
    return raw


def _check_span(raw: dict[str, Any], kind: str) -> None:
    text(raw, "span_id", required=True)
    text(raw, "trace_id")
    text(raw, "parent_span_id")
    text(raw, "name")
    text(raw, "kind")
    attributes = mapping(raw, "attributes")
    if attributes:
        _interpreted(attributes)
    if kind == SPAN_END:
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


_HEX = re.compile(r"[0-9a-f]+", re.IGNORECASE)


def otel_ids(raw: dict[str, Any]) -> None:
    """A span entry's OpenTelemetry ids as OTLP carries them: ``trace_id`` 32 hex digits,
    ``span_id`` and ``parent_span_id`` 16 (for a reader that sends them on, such as the export;
    the other readers only match them); else a :class:`BadEntry` naming the field."""
    for key, digits in (("trace_id", 32), ("span_id", 16), ("parent_span_id", 16)):
        value = raw.get(key)
        if value and (value.__class__ is not str or len(value) != digits or not _HEX.fullmatch(value)):
            raise BadEntry(f"{key!r} is {_shown(value)}, not {digits} hex digits")
