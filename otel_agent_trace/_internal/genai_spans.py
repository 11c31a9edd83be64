"""The shapes of agent and tool spans, shared by the public API and every instrumentation."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from otel_agent_trace import semconv
from otel_agent_trace._internal import sink
from otel_agent_trace._version import __version__
from otel_agent_trace.settings import get_settings

SCOPE = semconv.INSTRUMENTATION_SCOPE


def tracer() -> trace.Tracer:
    return trace.get_tracer(SCOPE, __version__)


def agent_span_name(name: str | None) -> str:
    return f"{semconv.OP_INVOKE_AGENT} {name}" if name else semconv.OP_INVOKE_AGENT


def agent_attributes(
    name: str | None,
    *,
    agent_id: str | None = None,
    description: str | None = None,
    version: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    attrs: dict[str, Any] = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT}
    for key, value in (
        (semconv.GEN_AI_AGENT_NAME, name),
        (semconv.GEN_AI_AGENT_ID, agent_id),
        (semconv.GEN_AI_AGENT_DESCRIPTION, description),
        (semconv.GEN_AI_AGENT_VERSION, version),
        (semconv.GEN_AI_PROVIDER_NAME, provider),
        (semconv.GEN_AI_REQUEST_MODEL, model),
        (semconv.GEN_AI_CONVERSATION_ID, conversation_id),
    ):
        if value is not None:
            attrs[key] = value
    return attrs


def tool_span_name(name: str) -> str:
    return f"{semconv.OP_EXECUTE_TOOL} {name}"


def tool_attributes(
    name: str,
    *,
    call_id: str | None = None,
    tool_type: str | None = "function",
    description: str | None = None,
    import_path: str | None = None,
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: name,
    }
    if call_id:
        attrs[semconv.GEN_AI_TOOL_CALL_ID] = call_id
    if tool_type:
        attrs[semconv.GEN_AI_TOOL_TYPE] = tool_type
    if description:
        attrs[semconv.GEN_AI_TOOL_DESCRIPTION] = description[:1000]
    if import_path:
        attrs[semconv.TOOL_IMPORT_PATH] = import_path
    return attrs


def import_path_of(fn: Callable[..., Any]) -> str | None:
    """``module:qualname`` of a callable that can be imported again (not a lambda or closure)."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def bind_arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Call arguments by parameter name (``self``/``cls`` left out)."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return {"args": list(args), **kwargs}
    out = dict(bound.arguments)
    for skip in ("self", "cls"):
        out.pop(skip, None)
    return out


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    from otel_agent_trace.session_format import dumps_canonical

    return dumps_canonical(value).decode("utf-8", "replace")


def record_content(span: Span, **content: Any) -> None:
    """Hand full-fidelity content of a span to the recorder (never put on the span itself)."""
    rec = sink.active()
    if rec is not None and span.is_recording():
        rec.attach_content(span, content)


def record_tool_io(
    span: Span,
    *,
    arguments: Any = None,
    result: Any = None,
    has_arguments: bool = False,
    has_result: bool = False,
) -> None:
    """Tool arguments/result: full in the session content; on the span only when the GenAI
    content-capture setting allows (the OTLP stream is redacted on the way out)."""
    content: dict[str, Any] = {}
    if has_arguments or arguments is not None:
        content["tool_arguments"] = arguments
    if has_result or result is not None:
        content["tool_result"] = result
    if not content:
        return
    record_content(span, **content)
    if get_settings().content_on_spans and span.is_recording():
        if "tool_arguments" in content:
            span.set_attribute(semconv.GEN_AI_TOOL_CALL_ARGUMENTS, _json_text(arguments))
        if "tool_result" in content:
            span.set_attribute(semconv.GEN_AI_TOOL_CALL_RESULT, _json_text(result))


def record_error(span: Span, exc: BaseException) -> None:
    """Span status ERROR, ``error.type`` and an exception event; the caller re-raises."""
    if not span.is_recording():
        return
    span.set_attribute(semconv.ERROR_TYPE, type(exc).__qualname__)
    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:1000]))


def start_span(
    name: str, attributes: dict[str, Any], kind: SpanKind = SpanKind.INTERNAL, tracer_: Any = None
) -> Span:
    """A span from ``tracer_`` (an instrumentor's own), else from the global provider."""
    return (tracer_ or tracer()).start_span(name, kind=kind, attributes=attributes)
