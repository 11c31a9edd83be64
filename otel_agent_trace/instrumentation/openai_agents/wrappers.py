"""OpenAI Agents SDK function tools: one ``execute_tool`` span per invocation.

The SDK invokes every ``FunctionTool`` through ``_invoke_function_tool_with_metadata`` (with the
``ToolContext`` carrying the model's ``tool_call_id``); the SDK's own tracing is not OpenTelemetry,
so this span is the only one. Its default failure handler turns an exception into an error string
for the model; the span then has status ERROR and ``error.type`` ``tool_error``.

Under a model replay with ``--tools recorded`` a call is answered from the recording instead: the
tool's ``on_invoke_tool`` is not called; the SDK gets the recorded output as the invocation's.
"""

from __future__ import annotations

import sys
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.genai_spans import import_path_of
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.context.tool_calls import ToolCall, enclosing_tool_span, start_tool_call
from otel_agent_trace.session_format.messages import parse_arguments

FUNCTION = "_invoke_function_tool_with_metadata"
FAILURE_HANDLER = "maybe_invoke_function_tool_failure_error_function"


def _callable_path(tool: Any) -> str | None:
    try:
        fn = tool.__wrapped__  # the function passed to @function_tool (a read-only descriptor)
    except AttributeError:
        return None
    return import_path_of(fn) if callable(fn) else None


@never_raise("openai-agents tool start", default=None)
def _start(kwargs: dict[str, Any]) -> ToolCall | None:
    tool = kwargs.get("function_tool")
    ctx = kwargs.get("context")
    if tool is None:
        return None
    return start_tool_call(
        str(getattr(tool, "name", "tool")),
        tracer=_tracer(),
        call_id=getattr(ctx, "tool_call_id", None),
        description=getattr(tool, "description", None),
        import_path=_callable_path(tool),
        arguments=parse_arguments(kwargs.get("arguments")),
    )


_RUN = object()  # "run the tool": no recorded result answers this call


def _recorded(call: ToolCall, wrapped: Any, kwargs: dict[str, Any]) -> Any:
    """Under a model replay with ``--tools recorded``: the invocation result for this call from
    the recording (the span finished with it); else :data:`_RUN`. A call that joined an
    enclosing tool span is left to that span's owner."""
    tool = kwargs.get("function_tool")
    call_id = getattr(kwargs.get("context"), "tool_call_id", None)
    found, output = _replay.answer_call(call, str(getattr(tool, "name", "tool")), call_id)
    if not found:
        return _RUN
    # what the wrapped function returns: the SDK's result holder (output and metadata)
    holder = getattr(
        sys.modules.get(getattr(wrapped, "__module__", "")), "_FunctionToolInvocationResult", None
    )
    return holder(output) if holder is not None else output


async def invoke_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(kwargs) if not args else None
    if call is None:
        return await wrapped(*args, **kwargs)
    if _replay.player is not None:
        result = _recorded(call, wrapped, kwargs)
        if result is not _RUN:
            return result
    return await call.arun(wrapped, args, kwargs, _outcome)


def _outcome(result: Any) -> tuple[Any, str | None]:
    """The tool's output, and ``tool_error`` when the SDK turned a failure into the output."""
    return getattr(result, "output", result), (
        "tool_error" if getattr(result, "is_sdk_generated_error", False) else None
    )


@never_raise("openai-agents tool failure")
def _record_handled(kwargs: dict[str, Any]) -> None:
    """The exception the SDK is about to turn into an error message for the model."""
    tool, error = kwargs.get("function_tool"), kwargs.get("error")
    span = enclosing_tool_span(str(getattr(tool, "name", "")))
    if span is not None and isinstance(error, BaseException):
        span.set_attribute(semconv.ERROR_TYPE, type(error).__qualname__)
        span.record_exception(error)


async def failure_handler_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    _record_handled(kwargs)
    return await wrapped(*args, **kwargs)


_patches: Patches | None = None  # the instrumentor's: its switch and tracer (see use)


def use(patches: Patches) -> None:
    """Make spans with the tracer of ``patches`` (the instrumentor's, which calls this before it
    wraps anything with these wrappers)."""
    global _patches
    _patches = patches


def _tracer() -> Any:
    """The tracer of the instrumentor that made these wrappers (its own ``tracer_provider``)."""
    return _patches.tracer() if _patches is not None else None
