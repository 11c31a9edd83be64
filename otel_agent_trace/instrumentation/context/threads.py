"""Work handed to another thread runs under the span that handed it over.

* ``threading.Thread`` (and ``Timer``, and every subclass, even one that overrides ``run``):
  the OpenTelemetry context current at ``start()`` is attached in the new thread for its life.
* ``ThreadPoolExecutor.submit`` (so ``map``, ``loop.run_in_executor`` and ``asyncio.to_thread``
  too): the context current at submit time is attached around each work item, so a pool's
  long-lived worker thread never runs one item under another item's span.

Only the OpenTelemetry context is carried, not every ``contextvars`` variable: other libraries'
context variables keep their ordinary thread semantics. When ``opentelemetry-instrumentation-
threading`` is active it already wraps ``submit``; ours then stands aside there (never two
wrappers around one work item). Its ``Thread.run`` wrapper attaches the same context ours does,
inside ours, so both together are harmless.
"""

from __future__ import annotations

import sys
import threading
from concurrent import futures
from typing import Any

from opentelemetry import context as otel_context

from otel_agent_trace._internal.guard import internal_error

from ._patches import PATCHES

_ATTR = "_oat_context"
# Thread._bootstrap_inner runs every thread's run(), overridden or not; fall back to run().
_THREAD_ENTRY = "_bootstrap_inner" if hasattr(threading.Thread, "_bootstrap_inner") else "run"


def _start(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    try:
        setattr(instance, _ATTR, otel_context.get_current())
    except AttributeError:  # a thread class with __slots__: it runs without our context
        pass
    return wrapped(*args, **kwargs)


def _entry(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    ctx = getattr(instance, _ATTR, None)
    if ctx is None:
        return wrapped(*args, **kwargs)
    token = otel_context.attach(ctx)
    try:
        return wrapped(*args, **kwargs)
    finally:
        otel_context.detach(token)  # logs (never raises) a token of another context


def upstream_threading_active() -> bool:
    """Whether ``opentelemetry-instrumentation-threading`` is instrumenting right now."""
    module = sys.modules.get("opentelemetry.instrumentation.threading")
    if module is None:
        return False
    try:
        return bool(module.ThreadingInstrumentor().is_instrumented_by_opentelemetry)
    except Exception as exc:  # another package's API changed: ours stays on
        internal_error("threading instrumentation check", exc)
        return False


def _submit(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if not args or upstream_threading_active():
        return wrapped(*args, **kwargs)
    fn = args[0]
    ctx = otel_context.get_current()

    def run_in_context(*a: Any, **kw: Any) -> Any:
        token = otel_context.attach(ctx)
        try:
            return fn(*a, **kw)
        finally:
            otel_context.detach(token)

    return wrapped(run_in_context, *args[1:], **kwargs)


_PATCHES = (
    (threading.Thread, "start", _start),
    (threading.Thread, _THREAD_ENTRY, _entry),
    (futures.ThreadPoolExecutor, "submit", _submit),
)


def instrument() -> None:
    """Wrap (the instrumentor switches :data:`PATCHES` on and off, and removes the wrappers)."""
    for owner, name, wrapper in _PATCHES:
        PATCHES.wrap(owner, name, wrapper)
