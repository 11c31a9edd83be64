"""Our span, message and session entries, made from another format's entries (each format's
``as_ours``): what ``analyze``, ``diff`` and the HTML view read, whatever the file's format.

Two entry "types" are only ever made here (objects, never a string read from a file): a failure
that is no span (:data:`FAILURE`: a response that did not parse, a plan that failed; its
``cause`` says which, the analysis gives it its stage) and a replan (:data:`REPLAN`).
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace import session_format as fmt

FAILURE = object()
REPLAN = object()
PARSE_FAILED = "parse"  # a FAILURE's cause: the model's response could not be used
PLAN_FAILED = "plan"  # a FAILURE's cause: planning failed

_NS = 1_000_000_000
_OWN_KEYS = frozenset({"id", "parent_id", "type", "layer", "ts", "run_id", "trace_id", "data"})


def text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value) if value >= 0 else None


def seconds_ns(data: dict[str, Any], seconds: tuple[str, ...], millis: tuple[str, ...]) -> int:
    """A duration from the first of these fields present (seconds, then milliseconds), in ns."""
    for key in seconds:
        value = _number(data.get(key))
        if value is not None:
            return int(value * _NS)
    for key in millis:
        value = _number(data.get(key))
        if value is not None:
            return int(value * 1_000_000)
    return 0


def integer(data: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = data.get(key)
        if type(value) is int:
            return value
    return None


def own(entry: dict[str, Any]) -> dict[str, Any]:
    """A foreign entry's own fields (what its payload or data held)."""
    return {k: v for k, v in entry.items() if k not in _OWN_KEYS}


def span_start(entry: dict[str, Any], name: str, layer: str, attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.SPAN_START,
        "layer": layer,
        "ts": entry.get("ts") or 0,
        "name": name,
        "span_id": entry["id"],
        "parent_span_id": None,
        "attributes": attributes,
    }


def span_end(
    entry: dict[str, Any],
    name: str,
    layer: str,
    attributes: dict[str, Any],
    *,
    span_id: str | None = None,
    parent: str | None = None,
    duration: int = 0,
    error: str | None = None,
    content: dict[str, Any] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"code": fmt.STATUS_OK}
    if error is not None:
        status = {"code": fmt.STATUS_ERROR, "description": error[:500] or "error"}
    out = {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.SPAN_END,
        "layer": layer,
        "ts": entry["ts"],
        "name": name,
        "span_id": span_id or entry["id"],
        "parent_span_id": parent,
        "duration_ns": duration,
        "status": status,
        "attributes": attributes,
    }
    if content is not None:
        out["content"] = content
    return out


def event(
    entry: dict[str, Any], name: str, layer: str, span_id: str | None, attributes: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.SPAN_EVENT,
        "layer": layer,
        "ts": entry["ts"],
        "name": name,
        "span_id": span_id,
        "attributes": attributes,
    }


def message(entry: dict[str, Any], content_key: str) -> dict[str, Any]:
    out = {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.MESSAGE,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "role": text(entry.get("role")) or None,
    }
    content = entry.get(content_key)
    if content is not None:
        out["content"] = content
    for key in ("content_chars", "content_sha256"):
        if key in entry:
            out[key] = entry[key]
    return out


def snapshot(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "parent_id": "",
        "type": fmt.SNAPSHOT,
        "layer": fmt.LAYER_AGENT,
        "ts": entry.get("ts") or 0,
    }


def failure(entry: dict[str, Any], cause: str, key: str, reason: str) -> dict[str, Any]:
    """A failure that is no span (see :data:`FAILURE`)."""
    return {
        "id": entry["id"],
        "type": FAILURE,
        "ts": entry["ts"],
        "name": text(entry.get("type")),
        "cause": cause,
        "key": key,
        "reason": reason,
    }


def replan(entry: dict[str, Any]) -> dict[str, Any]:
    return {"id": entry["id"], "type": REPLAN, "ts": entry.get("ts") or 0}


def session_start(
    entry: dict[str, Any], session_id: str, fmt_name: str, meta: dict[str, Any]
) -> dict[str, Any]:
    """The session's start; ``meta`` (its metadata) may still grow as the file is read."""
    meta.setdefault("format", fmt_name)
    return {
        "id": entry["id"],
        "parent_id": "",
        "type": fmt.SESSION_START,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "session_id": session_id,
        "tier": "",
        "metadata": meta,
    }


def session_end(entry: dict[str, Any], duration: int, unfinished: int) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "parent_id": "",
        "type": fmt.SESSION_END,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "duration_ns": duration,
        "unfinished_spans": unfinished,
    }
