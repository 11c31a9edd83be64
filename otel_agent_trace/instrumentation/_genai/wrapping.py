"""Patching with wrapt: each patch remembered so ``unwrap_all`` undoes exactly what was done.

A method that another instrumentation (a peer such as ``opentelemetry-instrumentation-openai-v2``)
wrapped before us is detected here: our wrapper then goes around theirs and calls the original
underneath, so each model call still makes one span (see docs/instrumentation.md).
"""

from __future__ import annotations

import importlib
from typing import Any

import wrapt
from opentelemetry.instrumentation.utils import unwrap

from otel_agent_trace._internal.guard import report_once

OURS = "_agent_trace_wrapper"


def _resolve(module: str, path: str) -> tuple[Any, str] | None:
    try:
        owner: Any = importlib.import_module(module)
    except ImportError:
        return None
    *parents, attr = path.split(".")
    for part in parents:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    if not hasattr(owner, attr):
        return None
    return owner, attr


def foreign_wrapper(owner: Any, attr: str) -> bool:
    """Whether ``owner.attr`` is already a wrapt wrapper that is not ours."""
    current = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
    if not isinstance(current, wrapt.FunctionWrapper):
        return False
    return not getattr(getattr(current, "_self_wrapper", None), OURS, False)


class Patches:
    """The patches of one instrumentor."""

    def __init__(self, name: str):
        self.name = name
        self._done: list[tuple[Any, str]] = []
        self.foreign: list[str] = []

    def wrap(self, module: str, path: str, wrapper: Any) -> bool:
        """Wrap ``module.path`` (``Class.method``); False when it does not exist (other version)."""
        found = _resolve(module, path)
        if found is None:
            return False
        owner, attr = found
        if foreign_wrapper(owner, attr):
            self.foreign.append(f"{module}.{path}")
            report_once(
                f"foreign:{module}.{path}",
                "otel-agent-trace: %s.%s is already instrumented by another package; "
                "%s records these calls once, without that package's span",
                module,
                path,
                self.name,
            )
            wrapper = _bypassing(wrapper)
        wrapper = _marked(wrapper)
        wrapt.wrap_function_wrapper(owner, attr, wrapper)
        self._done.append((owner, attr))
        return True

    def unwrap_all(self) -> None:
        while self._done:
            owner, attr = self._done.pop()
            try:
                unwrap(owner, attr)
            except Exception as exc:  # pragma: no cover - best effort
                report_once(f"unwrap:{attr}", "otel-agent-trace: could not unwrap %s: %s", attr, exc)
        self.foreign.clear()


def _marked(wrapper: Any) -> Any:
    """The wrapper, marked as ours (so a second look does not take it for a peer's)."""
    try:
        setattr(wrapper, OURS, True)
        return wrapper
    except (AttributeError, TypeError):

        def call(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            return wrapper(wrapped, instance, args, kwargs)

        setattr(call, OURS, True)
        return call


def _bypassing(wrapper: Any) -> Any:
    """Our wrapper, calling the original under a foreign wrapper (one span per call, ours)."""

    def call(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        inner = getattr(wrapped, "__wrapped__", None)
        if inner is None or not callable(inner):
            return wrapper(wrapped, instance, args, kwargs)
        return wrapper(inner, instance, args, kwargs)

    return call
