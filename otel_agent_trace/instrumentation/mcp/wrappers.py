"""``ClientSession.call_tool`` as an ``execute_tool`` span; ``list_tools`` as the offer it came from.

MCP carries no tool-call id of its own: a call made inside a framework's tool span of the same
name (LangChain MCP adapters, Strands' MCP tools, ``with oat.tool(name, call_id=...)``) joins that
span, which has the model's id; a bare ``call_tool`` has none.

Under a model replay with ``--tools recorded`` a call is answered from the recording instead: the
server is not called; the caller gets the recorded ``CallToolResult``.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation.context.tool_calls import ToolCall, start_tool_call
from otel_agent_trace.model_replay import _hooks as _replay

MCP_METHOD_NAME = "mcp.method.name"
TOOLS_OFFERED = "agent_trace.tools.offered"
TOOLS_LIST_EVENT = "mcp.tools.list"
_CACHE = "_oat_tools"


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    name = kwargs.get("name", args[0] if args else "tool")
    arguments = kwargs.get("arguments", args[1] if len(args) > 1 else None)
    return str(name), arguments


@never_raise("mcp call_tool start", default=None)
def _start(session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolCall | None:
    name, arguments = _arguments(args, kwargs)
    offered = getattr(session, _CACHE, None) or {}
    return start_tool_call(
        name,
        tracer=_tracer(),
        tool_type="extension",
        description=offered.get(name),
        arguments=arguments,
        attributes={MCP_METHOD_NAME: "tools/call"},
    )


def _result(result: Any) -> tuple[Any, str | None]:
    """What the server answered, and ``tool_error`` when it reported the call as failed."""
    dump = getattr(result, "model_dump", None)
    value = dump(mode="json", exclude_none=True) if callable(dump) else result
    return value, ("tool_error" if getattr(result, "isError", False) else None)


_RUN = object()  # "call the server": no recorded result answers this call


def _recorded(call: ToolCall, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Under a model replay with ``--tools recorded``: the recorded ``CallToolResult`` of this
    call (the span finished with it); else :data:`_RUN`. A call that joined an enclosing tool
    span (a framework's tool) is left to that span's owner."""
    if not call.owned:
        return _RUN
    name, _ = _arguments(args, kwargs)
    try:
        found, value = _replay.answer_tool_call(call.span, name, None)  # MCP has no call id
        if not found:
            return _RUN
        from mcp.types import CallToolResult

        result = CallToolResult.model_validate(value)
    except BaseException as exc:  # the replay's stop, or a recorded result that is not one
        call.fail(exc)
        raise
    call.finish(value)
    return result


async def call_tool_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    call = _start(instance, args, kwargs)
    if call is None:
        return await wrapped(*args, **kwargs)
    if _replay.player is not None:
        result = _recorded(call, args, kwargs)
        if result is not _RUN:
            return result
    return await call.arun(wrapped, args, kwargs, _result)


@never_raise("mcp list_tools")
def _remember(session: Any, result: Any) -> None:
    tools = list(getattr(result, "tools", None) or [])
    cache = getattr(session, _CACHE, None)
    if cache is None:
        cache = {}
        setattr(session, _CACHE, cache)
    for tool in tools:
        cache[str(tool.name)] = getattr(tool, "description", None) or ""
    span = trace.get_current_span()
    if not span.is_recording() or not tools:
        return
    attrs = {TOOLS_OFFERED: [str(t.name) for t in tools], MCP_METHOD_NAME: "tools/list"}
    rec = sink.active()
    if rec is None or not rec.record_event(span, TOOLS_LIST_EVENT, attrs):
        span.add_event(TOOLS_LIST_EVENT, attrs)


async def list_tools_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    result = await wrapped(*args, **kwargs)
    _remember(instance, result)
    return result


def _tracer() -> Any:
    """The tracer of the instrumentor that made these wrappers (its own ``tracer_provider``)."""
    from . import MCPInstrumentor

    return MCPInstrumentor._patches.tracer()
