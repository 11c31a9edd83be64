"""``@agent`` and ``@tool``: decorators and context managers for code that is not auto-instrumented.

Both work on functions, coroutines, generators and async generators, and as ``with`` blocks.
Whatever happens in our code, the wrapped function's result and exceptions reach the caller
unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, overload

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span

from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace._internal.sdk_compat import detach_quietly

F = TypeVar("F", bound=Callable[..., Any])


class SpanScope:
    """A started agent or tool span: a context manager, and a decorator when not started."""

    def __init__(
        self, kind: str, name: str | None, attrs: dict[str, Any], fn: Callable[..., Any] | None = None
    ):
        self.kind = kind
        self.name = name
        self._attrs = attrs
        self._fn = fn
        self.span: Span = trace.INVALID_SPAN
        self._token: object | None = None
        self._result_set = False

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> SpanScope:
        self.span = self._start()
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is not None:
            never_raise("record error")(gs.record_error)(self.span, exc)
        if self._token is not None:
            detach_quietly(self._token)
            self._token = None
        self.span.end()

    async def __aenter__(self) -> SpanScope:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    # -- recording ------------------------------------------------------------------------------

    @never_raise("start span", default=trace.INVALID_SPAN)
    def _start(self) -> Span:
        span_name = (
            gs.tool_span_name(self.name or "tool") if self.kind == "tool" else gs.agent_span_name(self.name)
        )
        return gs.start_span(span_name, self._attrs)

    @never_raise("record input")
    def set_input(self, value: Any) -> None:
        if self.kind == "tool":
            gs.record_tool_io(self.span, arguments=value, has_arguments=True)
        else:
            gs.record_content(self.span, agent_input=value)

    @never_raise("record result")
    def set_result(self, value: Any) -> None:
        self._result_set = True
        if self.kind == "tool":
            gs.record_tool_io(self.span, result=value, has_result=True)
        else:
            gs.record_content(self.span, agent_output=value)

    def set_attribute(self, key: str, value: Any) -> None:
        self.span.set_attribute(key, value)

    # -- decorator ------------------------------------------------------------------------------

    def __call__(self, fn: F) -> F:
        return _decorate(fn, self.kind, self.name, self._attrs, getattr(self, "_effects", ()))


_RUN = object()  # "run the tool": no recorded result answers this call


def _recorded_result(kind: str, name: str | None, scope: SpanScope) -> Any:
    """With a model replay answering tools from its recording (``--tools recorded``), the
    recorded result of this tool call (matched by call id and name); else :data:`_RUN`. Raises
    the replay's stop when no recorded call is left and the replay stops at divergences."""
    if _replay.player is None or kind != "tool":
        return _RUN
    attrs = getattr(scope.span, "attributes", None) or {}
    found, result = _replay.recorded_tool_result(name or "tool", attrs.get("gen_ai.tool.call.id"))
    if not found:
        return _RUN
    scope.set_attribute("agent_trace.replay.tool_result", "recorded")
    return result


def _decorate(fn: F, kind: str, name: str | None, attrs: dict[str, Any], effects: tuple[str, ...] = ()) -> F:
    wrapper = _wrap(fn, kind, name, attrs)
    if kind == "tool":  # what tool replay reads of the tool itself (never of a recording)
        declared = {"name": name or fn.__name__, "effects": effects}
        wrapper.__agent_trace_tool__ = declared  # type: ignore[attr-defined]
    return wrapper


def _wrap(fn: F, kind: str, name: str | None, attrs: dict[str, Any]) -> F:
    if kind == "tool":
        name = name or fn.__name__
        attrs = {
            **attrs,
            **gs.tool_attributes(
                name,
                import_path=gs.import_path_of(fn),
                description=attrs.get("gen_ai.tool.description") or inspect.getdoc(fn),
            ),
        }
    else:
        name = name or fn.__name__
        attrs = {**attrs, **gs.agent_attributes(name)}

    def enter(args: tuple[Any, ...], kwargs: dict[str, Any]) -> SpanScope:
        s = SpanScope(kind, name, attrs, fn)
        s.__enter__()
        never_raise("record input")(s.set_input)(gs.bind_arguments(fn, args, kwargs))
        return s

    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def agen_wrapper(*args: Any, **kwargs: Any) -> Any:
            s = SpanScope(kind, name, attrs, fn)
            s.span = s._start()
            never_raise("record input")(s.set_input)(gs.bind_arguments(fn, args, kwargs))
            gen = fn(*args, **kwargs)
            count = 0
            try:
                while True:
                    token = otel_context.attach(trace.set_span_in_context(s.span))
                    try:
                        item = await gen.__anext__()
                    except StopAsyncIteration:
                        break
                    finally:
                        otel_context.detach(token)
                    count += 1
                    yield item
                s.set_result({"items": count})
            except BaseException as exc:
                if not isinstance(exc, GeneratorExit):
                    never_raise("record error")(gs.record_error)(s.span, exc)
                raise
            finally:
                await gen.aclose()
                s.span.end()

        return agen_wrapper  # type: ignore[return-value]

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
            s = SpanScope(kind, name, attrs, fn)
            s.span = s._start()
            never_raise("record input")(s.set_input)(gs.bind_arguments(fn, args, kwargs))
            gen = fn(*args, **kwargs)
            count = 0
            try:
                while True:
                    token = otel_context.attach(trace.set_span_in_context(s.span))
                    try:
                        item = next(gen)
                    except StopIteration as stop:
                        s.set_result(
                            {"items": count, "return": stop.value}
                            if stop.value is not None
                            else {"items": count}
                        )
                        return stop.value
                    finally:
                        otel_context.detach(token)
                    count += 1
                    yield item
            except BaseException as exc:
                if not isinstance(exc, GeneratorExit):
                    never_raise("record error")(gs.record_error)(s.span, exc)
                raise
            finally:
                gen.close()
                s.span.end()

        return gen_wrapper  # type: ignore[return-value]

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            s = enter(args, kwargs)
            try:
                result = _recorded_result(kind, name, s)
                if result is _RUN:
                    result = await fn(*args, **kwargs)
            except BaseException as exc:
                s.__exit__(type(exc), exc, exc.__traceback__)
                raise
            s.set_result(result)
            s.__exit__(None, None, None)
            return result

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        s = enter(args, kwargs)
        try:
            result = _recorded_result(kind, name, s)
            if result is _RUN:
                result = fn(*args, **kwargs)
        except BaseException as exc:
            s.__exit__(type(exc), exc, exc.__traceback__)
            raise
        s.set_result(result)
        s.__exit__(None, None, None)
        return result

    return wrapper  # type: ignore[return-value]


@overload
def agent(fn: F, /) -> F: ...
@overload
def agent(
    name: str | None = None,
    *,
    agent_id: str | None = None,
    description: str | None = None,
    version: str | None = None,
    model: str | None = None,
    provider: str | None = None,
    conversation_id: str | None = None,
) -> SpanScope: ...


def agent(
    name: Any = None,
    *,
    agent_id: str | None = None,
    description: str | None = None,
    version: str | None = None,
    model: str | None = None,
    provider: str | None = None,
    conversation_id: str | None = None,
) -> Any:
    """An ``invoke_agent {name}`` span: ``@agent``, ``@agent("planner")`` or ``with agent("planner"):``."""
    if callable(name):
        return _decorate(name, "agent", None, {})
    attrs = gs.agent_attributes(
        name,
        agent_id=agent_id,
        description=description,
        version=version,
        model=model,
        provider=provider,
        conversation_id=conversation_id,
    )
    return SpanScope("agent", name, attrs)


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    name: str | None = None,
    *,
    description: str | None = None,
    call_id: str | None = None,
    tool_type: str = "function",
    arguments: Any = None,
    effects: tuple[str, ...] = (),
) -> SpanScope: ...


def tool(
    name: Any = None,
    *,
    description: str | None = None,
    call_id: str | None = None,
    tool_type: str = "function",
    arguments: Any = None,
    effects: tuple[str, ...] = (),
) -> Any:
    """An ``execute_tool {name}`` span: ``@tool``, ``@tool("search")`` or
    ``with tool("search", arguments={...}) as call: call.set_result(...)``.

    ``effects``: what the tool does besides reading and computing, any of ``"shell"`` (runs
    commands), ``"writes"`` (writes files), ``"network"``; tool replay blocks such a tool unless
    the user allows it (``--allow-shell``, ``--allow-writes``, ``--allow-network``)."""
    if callable(name):
        return _decorate(name, "tool", None, {})
    attrs = gs.tool_attributes(name or "tool", call_id=call_id, tool_type=tool_type, description=description)
    scope = _ToolScope("tool", name, attrs)
    scope._arguments = arguments
    scope._effects = tuple(effects)
    return scope


class _ToolScope(SpanScope):
    _arguments: Any = None
    _effects: tuple[str, ...] = ()

    def __enter__(self) -> SpanScope:
        super().__enter__()
        if self._arguments is not None:
            self.set_input(self._arguments)
        return self
