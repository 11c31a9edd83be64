"""What Strands' own ``execute_tool`` spans lack, added to them (never a second span).

Strands starts and ends the tool span itself (``Tracer.start_tool_call_span`` /
``end_tool_call_span``), with the tool name, the model's ``toolUseId`` as ``gen_ai.tool.call.id``
and the description. We add the arguments and the result through ``record_tool_io`` (full in the
session, on the span only per the content setting), ``error.type`` on failure, the tool type and
the import path of the tool's function.

Under a model replay with ``--tools recorded`` a call made under its tool span is answered from
the recording instead (``_executor._run_tool`` wrapped): the tool is not streamed; the executor
gets a ``ToolResultEvent`` with the recorded content, as the tool's last event.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation.context.tool_calls import enclosing_tool_span


@never_raise("strands tool start")
def _after_start(span: Any, tool_use: Any) -> None:
    if span is None or not span.is_recording() or not isinstance(tool_use, dict):
        return
    span.set_attribute(semconv.GEN_AI_TOOL_TYPE, "function")
    gs.record_tool_io(span, arguments=tool_use.get("input"), has_arguments=True)


def start_tool_call_span_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    span = wrapped(*args, **kwargs)
    _after_start(span, kwargs.get("tool", args[0] if args else None))
    return span


@never_raise("strands tool end")
def _before_end(span: Any, tool_result: Any, error: Any) -> None:
    if span is None or not span.is_recording():
        return
    if isinstance(tool_result, dict):
        gs.record_tool_io(span, result=tool_result.get("content"), has_result=True)
        if tool_result.get("status") == "error" and error is None:
            span.set_attribute(semconv.ERROR_TYPE, "tool_error")
    if isinstance(error, BaseException):
        span.set_attribute(semconv.ERROR_TYPE, type(error).__qualname__)


def end_tool_call_span_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    span = kwargs.get("span", args[0] if args else None)
    result = kwargs.get("tool_result", args[1] if len(args) > 1 else None)
    error = kwargs.get("error", args[2] if len(args) > 2 else None)
    _before_end(span, result, error)
    return wrapped(*args, **kwargs)


def tool_import_path(tool: Any) -> str | None:
    fn = getattr(tool, "_tool_func", None)
    if callable(fn):
        return gs.import_path_of(fn)
    return gs.import_path_of(type(tool)) if tool is not None else None


@never_raise("strands tool details")
def _details(result: Any, ctx: Any) -> None:
    span = result[0] if isinstance(result, tuple) and result else None
    tool = getattr(ctx, "tool", None)
    if span is None or tool is None or not span.is_recording():
        return
    if type(tool).__name__ == "MCPAgentTool":
        span.set_attribute(semconv.GEN_AI_TOOL_TYPE, "extension")
    path = tool_import_path(tool)
    if path:
        span.set_attribute(semconv.TOOL_IMPORT_PATH, path)


def start_tool_telemetry_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    result = wrapped(*args, **kwargs)
    _details(result, kwargs.get("ctx", args[0] if args else None))
    return result


def _recorded_result(ctx: Any) -> dict[str, Any] | None:
    """Under a model replay with ``--tools recorded``: the ``ToolResult`` of this call from the
    recording; ``None`` to run the tool. Only a call under its own (recording) tool span is
    answered: a direct ``agent.tool.x()`` call has no span, so none was recorded."""
    tool_use = getattr(ctx, "tool_use", None)
    if getattr(ctx, "tool", None) is None or not isinstance(tool_use, dict):
        return None
    name = str(tool_use.get("name") or "")
    span = enclosing_tool_span(name)
    if span is None:
        return None
    call_id = tool_use.get("toolUseId")
    found, content = _replay.answer_tool_call(span, name, str(call_id) if call_id is not None else None)
    if not found:
        return None
    if not isinstance(content, list):  # recorded by other means than Strands' end: as its content
        content = [{"text": content} if isinstance(content, str) else {"json": content}]
    return {"toolUseId": str(call_id), "status": "success", "content": content}


async def _answer(result: Any) -> Any:  # (a ToolResult: the dict _result builds)
    from strands.types._events import ToolResultEvent

    yield ToolResultEvent(result)


def run_tool_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if _replay.player is None:
        return wrapped(*args, **kwargs)
    result = _recorded_result(kwargs.get("ctx", args[0] if args else None))
    if result is None:
        return wrapped(*args, **kwargs)
    return _answer(result)
