"""Detaching an OpenTelemetry context without the "Failed to detach context" error.

A scope held open across an async generator's ``yield`` is exited wherever the generator is
closed: another task, or the event loop's finalizer. The token then belongs to another context
and ``opentelemetry.context.detach`` logs an ERROR with a traceback (openllmetry #3061). Nothing
is left to restore in that case (the context the token came from has moved on), so we skip it.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context


def detach_quietly(token: Any) -> bool:
    """Detach ``token``; ``False`` (and no log) when it was created in another context."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    try:
        if runtime is not None:
            runtime.detach(token)
        else:  # pragma: no cover - an API without the runtime context object
            otel_context.detach(token)
        return True
    except Exception:
        return False
