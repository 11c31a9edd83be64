"""The ``BaseTool.run`` / ``arun`` wrappers: one ``execute_tool`` span per tool call.

``invoke``/``ainvoke`` (and so LangGraph's ``ToolNode``, agents, ``batch``) go through ``run`` /
``arun``; wrapping only those gives exactly one span per call. A ``ToolCall`` dict passed to
``invoke`` arrives as ``tool_call_id``: the id the model gave the call in its ``AIMessage``.

Under a model replay with ``--tools recorded`` a call is answered from the recording instead: the
tool's ``run`` is not called (nor its callbacks); the caller gets the recorded content, or a
``ToolMessage`` when it passed a ``ToolCall``, as ``run`` returns them.
"""

from __future__ import annotations

import json
from typing import Any

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.genai_spans import import_path_of
from otel_agent_trace._internal.guard import internal_error, never_raise
from otel_agent_trace.instrumentation._patching import Patches
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


_RUN = object()  # "run the tool": no recorded result answers this call


def _recorded(call: ToolCall, tool: Any, kwargs: dict[str, Any]) -> Any:
    """Under a model replay with ``--tools recorded``: what ``run`` would return for this call,
    from the recording (the span finished with it); else :data:`_RUN`. A call that joined an
    enclosing tool span is left to that span's owner (it asked already)."""
    call_id = kwargs.get("tool_call_id")
    name = str(getattr(tool, "name", None) or type(tool).__name__)
    found, result = _replay.answer_call(call, name, call_id)
    return _output(tool, call_id, result) if found else _RUN


def _output(tool: Any, call_id: Any, result: Any) -> Any:
    """A recorded result (a ``ToolMessage``'s content, or ``{"content", "artifact"}``) as ``run``
    returns it: the content, or a ``ToolMessage`` when the call came with a tool-call id."""
    content, artifact = result, None
    if isinstance(result, dict) and set(result) == {"content", "artifact"}:
        content, artifact = result["content"], result["artifact"]
    if not call_id:
        return content
    from langchain_core.messages import ToolMessage

    if not isinstance(content, (str, list)):
        try:
            content = json.dumps(content, ensure_ascii=False)
        except (TypeError, ValueError):
            content = str(content)
    name = str(getattr(tool, "name", None) or type(tool).__name__)
    return ToolMessage(content, artifact=artifact, tool_call_id=call_id, name=name, status="success")


def run_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return wrapped(*args, **kwargs)
    if _replay.player is not None:
        output = _recorded(call, instance, kwargs)
        if output is not _RUN:
            return output
    return call.run(wrapped, args, kwargs, _result_and_error)


async def arun_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return await wrapped(*args, **kwargs)
    if _replay.player is not None:
        output = _recorded(call, instance, kwargs)
        if output is not _RUN:
            return output
    return await call.arun(wrapped, args, kwargs, _result_and_error)


_patches: Patches | None = None  # the instrumentor's: its switch and tracer (see use)


def use(patches: Patches) -> None:
    """Make spans with the tracer of ``patches`` (the instrumentor's, which calls this before it
    wraps anything with these wrappers)."""
    global _patches
    _patches = patches


def _tracer() -> Any:
    """The tracer of the instrumentor that made these wrappers (its own ``tracer_provider``)."""
    return _patches.tracer() if _patches is not None else None
