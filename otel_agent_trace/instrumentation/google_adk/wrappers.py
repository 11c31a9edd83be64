"""ADK's agent and tool spans, enriched.

* ``LlmAgent._run_async_impl(ctx)`` runs under ADK's ``invoke_agent`` span (its context attached
  while each event is produced): at the first event that span gets the user's message
  (``ctx.user_content``) as ``agent_input``; the final response's text, as it goes by, is
  ``agent_output``. ``SequentialAgent._run_async_impl(ctx)`` and ``LoopAgent``'s alike: its
  sub-agents' events pass through it (each sub-agent's span, under it, gets its own), the last
  final response is its output. ``ParallelAgent._run_async_impl(ctx)``: its branches' events
  pass through it interleaved; its output is each answering agent's last final response, by
  the agent's name (``{"weather": "...", "news": "..."}``).
* ``FunctionTool.run_async(args=, tool_context=)`` runs under ADK's ``execute_tool`` span: it gets
  the arguments and the result (in the session; on the span as the content setting says); a tool
  run with no ADK span around it gets an ``execute_tool`` span of ours with the call id ADK gave.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation.context.tool_calls import enclosing_tool_span, start_tool_call

_ADK_SCOPE = "gcp.vertex.agent"  # ADK's tracer


def _text(content: Any) -> str | None:
    parts = getattr(content, "parts", None) or ()
    texts = [p.text for p in parts if isinstance(getattr(p, "text", None), str)]
    return "".join(texts) if texts else None


def _agent_span() -> Any:
    current = trace.get_current_span()
    attrs = getattr(current, "attributes", None) or {}
    if current.is_recording() and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT:
        return current
    return None


@never_raise("google-adk agent input")
def _record_input(span: Any, ctx: Any) -> None:
    text = _text(getattr(ctx, "user_content", None))
    if text is not None and sink.active() is not None:
        gs.record_content(span, agent_input=text)


@never_raise("google-adk agent event")
def _observe(span: Any, event: Any, answers: dict[str, str] | None) -> None:
    if sink.active() is None or not event.is_final_response():
        return
    text = _text(getattr(event, "content", None))
    if text is None:
        return
    if answers is None:
        gs.record_content(span, agent_output=text)
    else:  # (a ParallelAgent's branches: each one's answer)
        answers[str(getattr(event, "author", None) or "")] = text
        gs.record_content(span, agent_output=dict(answers))


async def _enriched(inner: Any, ctx: Any, answers: dict[str, str] | None = None) -> Any:
    span = None
    first = True
    try:
        async for event in inner:
            if first:
                first = False
                span = _agent_span()  # ADK's, attached while the event was made
                if span is not None:
                    _record_input(span, ctx)
            if span is not None:
                _observe(span, event, answers)
            yield event
    finally:
        await inner.aclose()


def agent_run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``LlmAgent._run_async_impl(ctx)`` / ``SequentialAgent``'s / ``LoopAgent``'s: the events
    pass through unchanged."""
    ctx = kwargs.get("ctx", args[0] if args else None)
    return _enriched(wrapped(*args, **kwargs), ctx)


def parallel_run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``ParallelAgent._run_async_impl(ctx)``: the events pass through unchanged."""
    ctx = kwargs.get("ctx", args[0] if args else None)
    return _enriched(wrapped(*args, **kwargs), ctx, {})


@never_raise("google-adk tool content")
def _joined_io(span: Any, **io: Any) -> None:
    for key, value in io.items():
        gs.record_tool_io(span, **{key: jsonable(value), f"has_{key}": True})


def _adk_tool_span(name: str) -> Any:
    """ADK's ``execute_tool {name}`` span, current: it gets its attributes only as it ends."""
    current = trace.get_current_span()
    scope = getattr(getattr(current, "instrumentation_scope", None), "name", None)
    if (
        current.is_recording()
        and scope == _ADK_SCOPE
        and getattr(current, "name", None) == gs.tool_span_name(name)
    ):
        return current
    return None


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def tool_wrapper(tracer: Any) -> Any:
    """``FunctionTool.run_async(*, args, tool_context)``."""

    async def run_async(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        name = str(getattr(instance, "name", None) or "tool")
        arguments = kwargs.get("args", args[0] if args else None)
        span = enclosing_tool_span(name) or _adk_tool_span(name)
        if span is not None:
            _joined_io(span, arguments=arguments)
            result = await wrapped(*args, **kwargs)
            _joined_io(span, result=result)
            return result
        context = kwargs.get("tool_context")
        call = start_tool_call(
            name,
            tracer=tracer(),
            call_id=getattr(context, "function_call_id", None),
            description=getattr(instance, "description", None),
            arguments=jsonable(arguments),
        )
        if call is None:
            return await wrapped(*args, **kwargs)
        return await call.arun(wrapped, args, kwargs, _outcome)

    return run_async
