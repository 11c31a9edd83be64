"""One tool call as one ``execute_tool`` span: the helper every tool instrumentation uses.

It gives every tool span the shape of ``@oat.tool`` (``genai_spans``), and it keeps a call that
several layers see (a LangChain tool that calls an MCP tool, an MCP call inside a Strands tool)
to exactly one span: when the current span is already the ``execute_tool`` span of a tool of the
same name, the inner layer adds what it knows to that span instead of starting another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Span

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace._internal.sdk_compat import detach_quietly

Outcome = Callable[[Any], tuple[Any, "str | None"]]


def _recorded(outcome: Outcome, result: Any) -> tuple[Any, str | None]:
    """What to record of a result; the result itself if ``outcome`` fails (never the agent's problem)."""
    return never_raise("tool result", default=(result, None))(outcome)(result)


def enclosing_tool_span(name: str) -> Span | None:
    """The current span when it is the (recording) ``execute_tool`` span of a tool named ``name``."""
    span = trace.get_current_span()
    if not span.is_recording():
        return None
    attrs = getattr(span, "attributes", None) or {}
    if (
        attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_EXECUTE_TOOL
        and attrs.get(semconv.GEN_AI_TOOL_NAME) == name
    ):
        return span
    return None


class ToolCall:
    """A started tool call. ``enter()``/``exit()`` make its span current; ``finish``/``fail`` end it.

    ``owned`` is false when the call joined an enclosing span of the same tool: then only missing
    attributes are added and the span is left for its owner to end.
    """

    __slots__ = ("span", "owned", "_token")

    def __init__(self, span: Span, owned: bool):
        self.span = span
        self.owned = owned
        self._token: object | None = None

    def enter(self) -> None:
        if self.owned:
            self._token = otel_context.attach(trace.set_span_in_context(self.span))

    def exit(self) -> None:
        if self._token is not None:
            token, self._token = self._token, None
            detach_quietly(token)

    def run(self, wrapped: Any, args: Any, kwargs: Any, outcome: Outcome) -> Any:
        """Call the tool under this span; its result or exception reaches the caller unchanged.
        ``outcome(result)`` gives what to record: ``(value, error)``."""
        self.enter()
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            self.fail(exc)
            raise
        self.finish(*_recorded(outcome, result))
        return result

    async def arun(self, wrapped: Any, args: Any, kwargs: Any, outcome: Outcome) -> Any:
        """:meth:`run` for a coroutine function."""
        self.enter()
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self.fail(exc)
            raise
        self.finish(*_recorded(outcome, result))
        return result

    @never_raise("tool call result")
    def finish(self, result: Any, error: str | None = None) -> None:
        """Record the result (``error``: the tool reported a failure as its result) and end the span."""
        self.exit()
        if not self.owned:
            return
        gs.record_tool_io(self.span, result=result, has_result=True)
        if error:
            from opentelemetry.trace import Status, StatusCode

            if semconv.ERROR_TYPE not in (getattr(self.span, "attributes", None) or {}):
                self.span.set_attribute(semconv.ERROR_TYPE, error)
            self.span.set_status(Status(StatusCode.ERROR, error))
        self.span.end()

    @never_raise("tool call error")
    def fail(self, exc: BaseException) -> None:
        """Record the exception (the caller re-raises it unchanged) and end the span."""
        self.exit()
        if not self.owned:
            return
        gs.record_error(self.span, exc)
        self.span.end()


@never_raise("tool call start")
def start_tool_call(
    name: str,
    *,
    call_id: str | None = None,
    tool_type: str | None = "function",
    description: str | None = None,
    import_path: str | None = None,
    arguments: Any = None,
    attributes: dict[str, Any] | None = None,
    tracer: Any = None,
) -> ToolCall | None:
    """Start the span of one tool call (from ``tracer``: the calling instrumentor's), or join the
    enclosing span of the same tool.

    Returns ``None`` when instrumentation is suppressed (the caller then just calls the tool).
    """
    if not is_instrumentation_enabled():
        return None
    attrs = gs.tool_attributes(
        name, call_id=call_id, tool_type=tool_type, description=description, import_path=import_path
    )
    if attributes:
        attrs.update({k: v for k, v in attributes.items() if v is not None})
    existing = enclosing_tool_span(name)
    if existing is not None:
        have = getattr(existing, "attributes", None) or {}
        existing.set_attributes({k: v for k, v in attrs.items() if k not in have})
        return ToolCall(existing, owned=False)
    span = gs.start_span(gs.tool_span_name(name), attrs, tracer_=tracer)
    gs.record_tool_io(span, arguments=arguments, has_arguments=True)
    return ToolCall(span, owned=True)
