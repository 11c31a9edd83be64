"""LangGraph runs (``Pregel.stream`` / ``astream``, which ``invoke`` / ``ainvoke`` and the event
streams go through): one ``invoke_agent {graph name}`` span per run, with the model and tool
spans of its nodes under it. The run's input and final output go to the session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._genai.scoped import aiterate_in_span, iterate_in_span
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.langchain.messages import to_dict


def plain(value: Any, depth: int = 0) -> Any:
    """Graph state as JSON values (LangChain messages as message dicts)."""
    if depth > 20:
        return repr(value)
    if hasattr(value, "type") and hasattr(value, "content") and not isinstance(value, dict):
        return to_dict(value)
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    return jsonable(value)


class _Run:
    __slots__ = ("span", "last")

    def __init__(self, span: Any):
        self.span = span
        self.last: Any = None


def _start(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], patches: Patches) -> _Run | None:
    try:
        name = getattr(instance, "name", None) or "LangGraph"
        config = kwargs.get("config") if "config" in kwargs else (args[1] if len(args) > 1 else None)
        thread = (
            ((config or {}).get("configurable") or {}).get("thread_id") if isinstance(config, dict) else None
        )
        span = patches.tracer().start_span(
            gs.agent_span_name(name), attributes=gs.agent_attributes(name, conversation_id=thread)
        )
        if sink.active() is not None:
            value = args[0] if args else kwargs.get("input")
            gs.record_content(span, agent_input=plain(value))
        return _Run(span)
    except Exception as exc:
        internal_error("starting a langgraph run", exc)
        return None


def _observe(run: _Run, chunk: Any) -> None:
    run.last = chunk


def _end(run: _Run, error: BaseException | None, exhausted: bool) -> None:
    try:
        if error is not None:
            gs.record_error(run.span, error)
        elif run.last is not None and sink.active() is not None:
            gs.record_content(run.span, agent_output=plain(run.last))
    except Exception as exc:
        internal_error("ending a langgraph run", exc)
    finally:
        run.span.end()


def wrapper(method: str, patches: Patches) -> Callable[..., Any]:
    """The ``wrapt`` wrapper of ``Pregel.stream`` / ``astream``; spans from ``patches``' tracer."""
    iterate = aiterate_in_span if method == "astream" else iterate_in_span

    def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        start = lambda: _start(instance, args, kwargs, patches)  # noqa: E731
        return iterate(wrapped(*args, **kwargs), start, _observe, _end)

    return run
