"""MCP tool calls as ``execute_tool`` spans; the tool lists as the offer they came from.

MCP carries no tool-call id of its own: a call made inside a framework's tool span of the same
name (LangChain MCP adapters, Strands' MCP tools, ``with oat.tool(name, call_id=...)``) joins that
span, which has the model's id; a bare ``call_tool`` has none.

Under a model replay with ``--tools recorded`` a call is answered from the recording instead: the
server is not called; the caller gets the recorded ``CallToolResult``.

mcp 2.x makes spans of its own (``mcp.shared._otel.otel_span``): a CLIENT span ``MCP send
{method}`` per request, W3C trace context in the request's ``_meta``, and a SERVER span
``{method}`` per request a server handles, the ``tools/call {name}`` one marked
``gen_ai.operation.name = execute_tool``. For a ``tools/call`` we record, both would be the same
call again (the server's even a second tool span when it runs in this process), so
:func:`otel_span_wrapper` folds them into ours: the client span is not made and our span is the
one whose context the request carries (a server in another process nests its span under it: one
trace); an in-process server's span for it is not made either, and the tool runs under our span.
Every other span of mcp's (``initialize``, ``tools/list``, a call from another process) is left
as mcp makes it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanKind

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace._internal.sdk_compat import detach_quietly
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.context.tool_calls import ToolCall, start_tool_call

MCP_METHOD_NAME = "mcp.method.name"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
TOOLS_OFFERED = "agent_trace.tools.offered"
TOOLS_LIST_EVENT = "mcp.tools.list"
_CACHE = "_oat_tools"


@dataclass(frozen=True)
class Flavour:
    """What differs between the majors of ``mcp``, chosen once when it is instrumented."""

    v2: bool  # 2.x: snake_case result fields (``is_error``) whose aliases are the wire names

    @property
    def error_field(self) -> str:
        return "is_error" if self.v2 else "isError"


def flavour_of(call_tool_result: type) -> Flavour:
    fields = getattr(call_tool_result, "model_fields", None) or {}
    return Flavour(v2="is_error" in fields)


# -- the calls in flight ------------------------------------------------------------------------

# span id → [span, holders]: the execute_tool span of each MCP tool call this process has in
# flight (ours or the framework span it joined), for mcp 2.x's own spans of the same call to fold
# into. Span ids are random 64 bits: a parent from another process is never one of them.
_LIVE: dict[int, list[Any]] = {}


def _hold(span: Any) -> int:
    span_id = span.get_span_context().span_id
    entry = _LIVE.get(span_id)
    if entry is None:
        _LIVE[span_id] = [span, 1]
    else:
        entry[1] += 1
    return span_id


def _release(span_id: int) -> None:
    entry = _LIVE.get(span_id)
    if entry is not None:
        entry[1] -= 1
        if entry[1] <= 0:
            del _LIVE[span_id]


# -- call_tool ----------------------------------------------------------------------------------


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    name = kwargs.get("name", args[0] if args else "tool")
    arguments = kwargs.get("arguments", args[1] if len(args) > 1 else None)
    return str(name), arguments


def _session_of(client: Any) -> Any:
    """The ``ClientSession`` of a 2.x ``Client`` (None before it is connected)."""
    try:
        return client.session
    except Exception:  # not connected (yet, or any more): its own call will say so
        return None


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


def _outcome(flavour: Flavour) -> Callable[[Any], tuple[Any, str | None]]:
    error_field = flavour.error_field
    by_alias = flavour.v2  # the wire names (isError, structuredContent), as 1.x records them

    def outcome(result: Any) -> tuple[Any, str | None]:
        """What the server answered, and ``tool_error`` when it reported the call as failed."""
        dump = getattr(result, "model_dump", None)
        if callable(dump):
            value = (
                dump(mode="json", exclude_none=True, by_alias=True)
                if by_alias
                else dump(mode="json", exclude_none=True)
            )
        else:
            value = result
        return value, ("tool_error" if getattr(result, error_field, False) is True else None)

    return outcome


_RUN = object()  # "call the server": no recorded result answers this call


def _recorded(call: ToolCall, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Under a model replay with ``--tools recorded``: the recorded ``CallToolResult`` of this
    call (the span finished with it); else :data:`_RUN`. A call that joined an enclosing tool
    span (a framework's tool, or 2.x's ``Client.call_tool`` around its session's) is left to that
    span's owner."""
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


def call_tool_wrapper(flavour: Flavour, *, client: bool = False) -> Callable[..., Any]:
    """The wrapper of ``ClientSession.call_tool``; with ``client``, of 2.x's ``Client.call_tool``
    (whose session's calls, retries included, join its span)."""
    outcome = _outcome(flavour)

    async def call_tool(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(_session_of(instance) if client else instance, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        if _replay.player is not None:
            result = _recorded(call, args, kwargs)
            if result is not _RUN:
                return result
        held = _hold(call.span)
        try:
            return await call.arun(wrapped, args, kwargs, outcome)
        finally:
            _release(held)

    return call_tool


# -- list_tools ---------------------------------------------------------------------------------

_LISTING = contextvars.ContextVar("oat_mcp_client_listing", default=False)


@never_raise("mcp list_tools")
def _remember(session: Any, result: Any) -> None:
    tools = list(getattr(result, "tools", None) or [])
    if session is not None:
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


def list_tools_wrapper(*, client: bool) -> Callable[..., Any]:
    """The wrapper of ``ClientSession.list_tools``; with ``client``, of 2.x's ``Client.list_tools``
    (which may answer from its cache without asking its session): the listing is remembered once,
    by the outermost of the two."""

    if client:

        async def list_tools(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            token = _LISTING.set(True)
            try:
                result = await wrapped(*args, **kwargs)
            finally:
                _LISTING.reset(token)
            _remember(_session_of(instance), result)
            return result

        return list_tools

    async def session_list_tools(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = await wrapped(*args, **kwargs)
        if not _LISTING.get():
            _remember(instance, result)
        return result

    return session_list_tools


# -- mcp 2.x's own spans ------------------------------------------------------------------------


@contextmanager
def _folded(span: Any) -> Iterator[Any]:
    """In place of one of mcp's spans: ``span`` (our call's) current, and a non-recording span
    with its context for mcp to set its attributes and status on (ours get the call's own)."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield NonRecordingSpan(span.get_span_context())
    finally:
        detach_quietly(token)


@never_raise("mcp span fold", default=None)
def _fold(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The span an ``otel_span(...)`` of mcp's folds into (one of our calls in flight), else None."""
    attrs = kwargs.get("attributes") or {}
    if not _LIVE or attrs.get(MCP_METHOD_NAME) != "tools/call":
        return None
    kind = kwargs.get("kind")
    if kind == SpanKind.CLIENT:  # ``MCP send tools/call {name}``, made under our span
        parent = trace.get_current_span()
    elif kind == SpanKind.SERVER:  # ``tools/call {name}``: its parent came in the request's _meta
        context = kwargs.get("context")
        parent = trace.get_current_span(context) if context is not None else trace.get_current_span()
    else:
        return None
    entry = _LIVE.get(parent.get_span_context().span_id)
    if entry is None:
        return None
    span = entry[0]
    if kind == SpanKind.SERVER:
        name = (getattr(span, "attributes", None) or {}).get("gen_ai.tool.name")
        if attrs.get("gen_ai.tool.name") != name:
            return None
    elif JSONRPC_REQUEST_ID in attrs and JSONRPC_REQUEST_ID not in (getattr(span, "attributes", None) or {}):
        span.set_attribute(JSONRPC_REQUEST_ID, str(attrs[JSONRPC_REQUEST_ID]))  # the first request
    return _folded(span)


def otel_span_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """mcp 2.x's ``otel_span`` (a context-manager factory): folded for a call of ours, else as is."""
    folded = _fold(args, kwargs)
    if folded is None:
        return wrapped(*args, **kwargs)
    return folded


_patches: Patches | None = None  # the instrumentor's: its switch and tracer (see use)


def use(patches: Patches) -> None:
    """Make spans with the tracer of ``patches`` (the instrumentor's, which calls this before it
    wraps anything with these wrappers)."""
    global _patches
    _patches = patches


def _tracer() -> Any:
    """The tracer of the instrumentor that made these wrappers (its own ``tracer_provider``)."""
    return _patches.tracer() if _patches is not None else None
