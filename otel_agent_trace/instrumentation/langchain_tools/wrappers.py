"""The ``BaseTool.run`` / ``arun`` wrappers: one ``execute_tool`` span per tool call.

``invoke``/``ainvoke`` (and so LangGraph's ``ToolNode``, agents, ``batch``) go through ``run`` /
``arun``; wrapping only those gives exactly one span per call. A ``ToolCall`` dict passed to
``invoke`` arrives as ``tool_call_id``: the id the model gave the call in its ``AIMessage``.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace._internal.genai_spans import import_path_of
from otel_agent_trace._internal.guard import internal_error, never_raise
from otel_agent_trace.instrumentation.context.tool_calls import ToolCall, start_tool_call

_RUN_PARAMS = ("tool_input", "verbose", "start_color", "color", "callbacks")


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    index = _RUN_PARAMS.index(name) if name in _RUN_PARAMS else -1
    return args[index] if 0 <= index < len(args) else None


def tool_import_path(tool: Any) -> str | None:
    """Where the tool can be imported again: its function (``@tool``/``StructuredTool``) or class."""
    for attr in ("func", "coroutine"):
        fn = getattr(tool, attr, None)
        if callable(fn):
            path = import_path_of(fn)
            if path:
                return path
    return import_path_of(type(tool))


def _arguments(tool: Any, tool_input: Any) -> Any:
    if isinstance(tool_input, dict):
        filtered = getattr(tool, "_filter_injected_args", None)
        if callable(filtered):
            try:
                return filtered(tool_input)
            except Exception as exc:  # LangChain's private helper changed: the arguments unfiltered
                internal_error("filtering LangChain tool arguments", exc)
    return tool_input


@never_raise("langchain tool start", default=None)
def _start(tool: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolCall | None:
    return start_tool_call(
        str(getattr(tool, "name", None) or type(tool).__name__),
        tracer=_tracer(),
        call_id=kwargs.get("tool_call_id"),
        description=getattr(tool, "description", None),
        import_path=tool_import_path(tool),
        arguments=_arguments(tool, _argument(args, kwargs, "tool_input")),
    )


def _result_and_error(output: Any) -> tuple[Any, str | None]:
    """The content of a ``ToolMessage`` (and ``tool_error`` when LangChain handled a failure)."""
    if type(output).__name__ == "ToolMessage" and hasattr(output, "content"):
        result: Any = output.content
        artifact = getattr(output, "artifact", None)
        if artifact is not None:
            result = {"content": result, "artifact": artifact}
        return result, ("tool_error" if getattr(output, "status", None) == "error" else None)
    return output, None


def run_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return wrapped(*args, **kwargs)
    return call.run(wrapped, args, kwargs, _result_and_error)


async def arun_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return await wrapped(*args, **kwargs)
    return await call.arun(wrapped, args, kwargs, _result_and_error)


def _tracer() -> Any:
    """The tracer of the instrumentor that made these wrappers (its own ``tracer_provider``)."""
    from . import LangChainToolsInstrumentor

    return LangChainToolsInstrumentor._patches.tracer()
