"""A process started with ``TRACEPARENT`` in its environment continues that trace.

Called once at start (by the context instrumentor, under ``opentelemetry-instrument``): the W3C
context from ``TRACEPARENT``/``TRACESTATE`` becomes the process's base context, so its first spans
are children of the span that started the process (whatever ``OTEL_PROPAGATORS`` says: the
environment carrier is W3C by definition).
"""

from __future__ import annotations

import os
import threading

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from otel_agent_trace._internal.guard import never_raise

_restored = {"done": False}


@never_raise("restore parent context", default=False)
def restore_parent_context() -> bool:
    """Attach the context from ``TRACEPARENT`` in the main thread, once; ``True`` when attached."""
    if _restored["done"] or threading.current_thread() is not threading.main_thread():
        return False
    traceparent = os.environ.get("TRACEPARENT")
    if not traceparent:
        return False
    if trace.get_current_span().get_span_context().is_valid:
        return False  # something already made a span current here: leave it alone
    carrier = {"traceparent": traceparent}
    if os.environ.get("TRACESTATE"):
        carrier["tracestate"] = os.environ["TRACESTATE"]
    ctx = TraceContextTextMapPropagator().extract(carrier)
    if not trace.get_current_span(ctx).get_span_context().is_valid:
        return False
    otel_context.attach(ctx)  # never detached: it is the base of this process's context
    _restored["done"] = True
    return True
