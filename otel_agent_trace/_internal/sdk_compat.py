"""Every use of OpenTelemetry's private internals (SDK and API), in one place, each feature-detected.

The SDK's public API is too slow or too narrow for a few hot or structural needs (a span's raw
attribute dict, a provider's processors, the batch processor's queue, the configurator's
``export_span_processor`` hook). Each is read here and nowhere else, with a public fallback when
the internal is missing, so an SDK release that moves one degrades speed or a count, never
correctness, and never raises into ``span.end()``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from itertools import chain
from typing import Any


def span_attributes(span: Any) -> dict[str, Any]:
    """A plain copy of a span's attributes (the SDK's mapping proxy iterates in Python: ~20×
    slower than copying its dict)."""
    try:
        return dict(span._attributes._dict)
    except AttributeError:
        attrs = span.attributes
        return dict(attrs) if attrs else {}


def set_attribute_fast(span: Any, key: str, value: str) -> None:
    """``span.set_attribute(key, value)`` for a span that is starting, straight into the SDK's
    attribute dict when it can take it (no other thread sees the span yet and the value is a
    short str, so the SDK's locking and validation add nothing); otherwise through the API."""
    try:
        bounded = span._attributes
        raw = bounded._dict
        maxlen = bounded.maxlen
        if (
            type(raw) is dict
            and (maxlen is None or len(raw) < maxlen)
            and not bounded._immutable
            and (bounded.max_value_len is None or len(value) <= bounded.max_value_len)
        ):
            raw[key] = value
            return
    except AttributeError:
        pass
    span.set_attribute(key, value)


_PLAIN = frozenset({str, int, float, bool})
_TUPLE = frozenset({tuple})
_STR = frozenset({str})


def set_attributes_fast(
    span: Any, attributes: dict[str, Any], str_tuples: dict[str, Any] | None = None
) -> None:
    """``span.set_attributes({**attributes, **str_tuples})`` for attributes the SDK would keep as
    they are — the caller's own constant keys (non-empty ``str``); ``attributes``' values ``str``,
    ``int``, ``float`` or ``bool``, ``str_tuples``' non-empty tuples of ``str`` — straight into the
    span's attribute dict under the span's lock: the SDK's per-value validation and per-item
    locking cost more than their export. The values are checked in C, all at once. Anything else
    — another value type, a length limit, a full dict, an ended span, an SDK that keeps its
    attributes elsewhere — goes through ``set_attributes`` unchanged."""
    merged = {**attributes, **str_tuples} if str_tuples else attributes
    try:
        bounded = span._attributes
        raw = bounded._dict
        maxlen = bounded.maxlen
        if (
            type(raw) is dict
            and set(map(type, attributes.values())) <= _PLAIN
            and (not str_tuples or _are_str_tuples(str_tuples.values()))
            and span._end_time is None
            and (maxlen is None or len(raw) + len(merged) <= maxlen)
            and not bounded._immutable
            and bounded.max_value_len is None
        ):
            with span._lock:
                if not raw.keys().isdisjoint(merged):  # (the SDK moves a key set again to the end)
                    for key in merged:
                        raw.pop(key, None)
                raw.update(merged)
            return
    except AttributeError:
        pass
    span.set_attributes(merged)


def _are_str_tuples(values: Any) -> bool:
    """Whether every one of ``values`` is a non-empty tuple holding only ``str`` (checked in C)."""
    return (
        set(map(type, values)) <= _TUPLE
        and all(values)
        and set(map(type, chain.from_iterable(values))) <= _STR
    )


def tag_starting_span(span: Any, key: str, key_if_absent: str, value: str) -> None:
    """``value`` under ``key`` and, unless the span already has one, under ``key_if_absent`` (a
    host's own value is never replaced) — on a span that is starting, as
    :func:`set_attribute_fast` does, in one pass."""
    try:
        bounded = span._attributes
        raw = bounded._dict
        maxlen = bounded.maxlen
        if (
            type(raw) is dict
            and (maxlen is None or len(raw) + 2 <= maxlen)
            and not bounded._immutable
            and (bounded.max_value_len is None or len(value) <= bounded.max_value_len)
        ):
            raw[key] = value
            if key_if_absent not in raw:
                raw[key_if_absent] = value
            return
    except AttributeError:
        pass
    span.set_attribute(key, value)
    attributes = span.attributes
    if not attributes or key_if_absent not in attributes:
        span.set_attribute(key_if_absent, value)


def has_events(span: Any) -> bool:
    """Whether a span may have events (the SDK's ``span.events`` copies its list on each access:
    this reads the list itself; ``True`` when it cannot be seen)."""
    return bool(getattr(span, "_events", True))


def span_event_limit(span: Any) -> int:
    """How many events the SDK keeps on a span (``SpanLimits.max_events``; 128 by default)."""
    limit = getattr(getattr(span, "_limits", None), "max_events", None)
    return limit if isinstance(limit, int) else 128


def span_processors(provider: Any) -> tuple[Any, ...]:
    """The span processors added to an SDK ``TracerProvider`` (empty when they cannot be seen)."""
    active = getattr(provider, "_active_span_processor", None)
    return tuple(getattr(active, "_span_processors", ()) or ())


def batch_queue(processor: Any) -> Any:
    """The queue of an SDK ``BatchSpanProcessor`` (``None`` if this SDK keeps it elsewhere)."""
    inner = getattr(processor, "_batch_processor", processor)
    return getattr(inner, "_queue", None)


def batch_max_queue_size(processor: Any) -> int | None:
    inner = getattr(processor, "_batch_processor", processor)
    size = getattr(inner, "_max_queue_size", None)
    return size if isinstance(size, int) else None


def shutdown_batch(processor: Any, timeout_millis: int) -> None:
    """Shut a ``BatchSpanProcessor`` down waiting at most ``timeout_millis`` where the SDK allows
    a bound (its own ``shutdown()`` takes none)."""
    inner = getattr(processor, "_batch_processor", None)
    if inner is not None and "timeout_millis" in _parameters(inner.shutdown):
        inner.shutdown(timeout_millis=timeout_millis)
    else:
        processor.shutdown()


@cache
def configurator_takes_export_span_processor() -> bool:
    """Whether the SDK configurator accepts ``export_span_processor`` (SDK 1.40+), the hook that
    lets our configurator choose the processor of each exporter."""
    try:
        from opentelemetry.sdk._configuration import _initialize_components
    except ImportError:
        return False
    return "export_span_processor" in _parameters(_initialize_components)


def _parameters(fn: Any) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


@contextmanager
def span_clock(clock: Callable[[], int]) -> Iterator[None]:
    """While inside, SDK spans and span events take their times from ``clock`` (ns) — for
    reproducible recordings in tests (:mod:`otel_agent_trace.testing`), never in production."""
    import opentelemetry.sdk.trace as sdk_trace

    if not callable(getattr(sdk_trace, "time_ns", None)):
        raise RuntimeError("this opentelemetry-sdk takes span times from elsewhere; cannot fix them")
    previous = sdk_trace.__dict__["time_ns"]  # (not among the module's public names)
    sdk_trace.time_ns = clock  # type: ignore[assignment]
    try:
        yield
    finally:
        sdk_trace.time_ns = previous  # type: ignore[assignment]


# --- API: detaching a context token created elsewhere -------------------------------------
# A scope held open across an async generator's ``yield`` is exited wherever the generator is
# closed: another task, or the event loop's finalizer. The token then belongs to another context
# and ``opentelemetry.context.detach`` logs an ERROR with a traceback (openllmetry #3061). Nothing
# is left to restore in that case (the context the token came from has moved on), so we skip it.


def detach_quietly(token: Any) -> bool:
    """Detach ``token``; ``False`` (and no log) when it was created in another context."""
    from opentelemetry import context as otel_context

    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    try:
        if runtime is not None:
            runtime.detach(token)
        else:  # pragma: no cover - an API without the runtime context object
            otel_context.detach(token)
        return True
    except (ValueError, RuntimeError):  # the token belongs to another context: nothing to restore
        return False
