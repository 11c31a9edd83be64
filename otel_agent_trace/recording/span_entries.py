"""Entries built from spans: the layer of a span, its status and dropped counts as written, and
the ``span.start``, ``span.event`` and ``span.end`` entries (``id`` and ``parent_id`` are the
writer's to fill)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

if TYPE_CHECKING:
    from .tier_state import TierState

# Span attributes whose value is the session's id on every span: said once, in the root entry
# (``span_attributes``), and left out of each span's entries.
SESSION_KEYS = _OURS, _SHARED = (semconv.AGENT_TRACE_SESSION_ID, semconv.SESSION_ID)
_SYS_EVENTS = ("file.", "process.", "http.", "network.")


class LiveSpan(NamedTuple):
    """What a span's start computed, reused at its end: valid while its name and attributes are
    unchanged (one per span in flight)."""

    layer: str
    trace_hex: str
    span_hex: str
    name: str
    attributes: dict[str, Any]
    shown: list[tuple[str, dict[str, Any] | None]]  # per tier: the name and attributes shown


_SYS_PREFIXES = ("http.", "url.", "process.", "file.", "db.", "rpc.", "server.", "network.", "messaging.")


def layer_of(attributes: Any) -> str:
    """The DevDuck layer of a span: tool calls, agent/model work, or system activity."""
    if not attributes:
        return fmt.LAYER_AGENT
    explicit = attributes.get(semconv.LAYER)
    if explicit in fmt.LAYERS:
        return explicit
    op = attributes.get(semconv.GEN_AI_OPERATION_NAME)
    if op is not None:
        return fmt.LAYER_TOOL if op == semconv.OP_EXECUTE_TOOL else fmt.LAYER_AGENT
    for key in attributes:
        if key.startswith(_SYS_PREFIXES):
            return fmt.LAYER_SYS
    return fmt.LAYER_AGENT


_PLAIN_STATUS: dict[Any, dict[str, str]] = {}  # status code → {"code": name}, shared (read-only)


def status_fields(status: Any) -> dict[str, str]:
    """A span status as an entry has it: ``{"code": name}`` (one shared, read-only dict per code)
    or, with a description, ``{"code": …, "description": …}``."""
    code = status.status_code
    if status.description:
        return {"code": code.name, "description": status.description}
    plain = _PLAIN_STATUS.get(code)
    if plain is None:
        plain = _PLAIN_STATUS[code] = {"code": code.name}
    return plain


def dropped_counts(span: Any) -> dict[str, int] | None:
    """What the SDK's limits dropped from a span, if anything."""
    if span.dropped_attributes or span.dropped_events:
        return {"events": span.dropped_events, "attributes": span.dropped_attributes}
    return None


def end_entry(
    tier: TierState,
    shown: tuple[str, dict[str, Any] | None],
    layer: str,
    end: int,
    kind: str,
    trace_hex: str,
    span_hex: str,
    parent_hex: str | None,
    duration: int,
    status: dict[str, str],
    dropped: dict[str, int] | None,
) -> dict[str, Any]:
    """A ``span.end`` entry for one tier (``id`` and ``parent_id`` are the writer's to fill);
    ``shown``: the span's name and attributes as the tier shows them."""
    name, attributes = shown
    entry: dict[str, Any] = {
        "id": "",
        "parent_id": None,
        "type": fmt.SPAN_END,
        "layer": layer,
        "ts": end,
        "name": name,
        "kind": kind,
        "trace_id": trace_hex,
        "span_id": span_hex,
        "duration_ns": duration,
    }
    if parent_hex is not None:  # (a trace root's null is left out)
        entry["parent_span_id"] = parent_hex
    if len(status) > 1:  # a description
        entry["status"] = tier.policy.value(status)
    elif status["code"] != fmt.STATUS_UNSET:  # (an UNSET status is left out)
        entry["status"] = status
    if attributes:
        entry["attributes"] = attributes
    if dropped:
        entry["dropped"] = dropped
    return entry


def said_once(attrs: dict[str, Any], session_id: str) -> None:
    """Leave out of a span's attributes (a copy) what the root entry's ``span_attributes`` says
    (the session's id); a key the span does not have is written ``null``."""
    if attrs.get(_OURS) is session_id and attrs.get(_SHARED) is session_id:  # the common case
        del attrs[_OURS], attrs[_SHARED]
        return
    for key in SESSION_KEYS:
        tagged = attrs.pop(key, None)
        if tagged is not session_id and tagged != session_id:
            attrs[key] = tagged


def start_entry(
    shown: tuple[str, dict[str, Any] | None],
    layer: str,
    ts: int,
    kind: str,
    trace_hex: str,
    span_hex: str,
    parent_hex: str | None,
) -> dict[str, Any]:
    """A ``span.start`` entry for one tier, with the name and attributes it shows (``shown``)."""
    name, attributes = shown
    entry: dict[str, Any] = {
        "id": "",
        "parent_id": None,
        "type": fmt.SPAN_START,
        "layer": layer,
        "ts": ts,
        "name": name,
        "kind": kind,
        "trace_id": trace_hex,
        "span_id": span_hex,
    }
    if parent_hex is not None:  # (a trace root's null is left out)
        entry["parent_span_id"] = parent_hex
    if attributes:
        entry["attributes"] = attributes
    return entry


def event_entry(
    tier: TierState, trace_hex: str, span_hex: str, layer: str, name: str, ts: int, attributes: Any
) -> dict[str, Any]:
    """A ``span.event`` entry for one tier (a system event's layer is ``sys``)."""
    entry: dict[str, Any] = {
        "id": "",
        "parent_id": None,
        "type": fmt.SPAN_EVENT,
        "layer": fmt.LAYER_SYS if name.startswith(_SYS_EVENTS) else layer,
        "ts": ts,
        "name": tier.policy.text(name),
        "trace_id": trace_hex,
        "span_id": span_hex,
    }
    if attributes:
        entry["attributes"] = tier.policy.attributes(dict(attributes), name)
    return entry
