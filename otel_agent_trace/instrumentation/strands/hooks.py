"""Wrappers of Strands' ``Tracer`` methods: each calls Strands first or last, unchanged, and
adds our content/snapshot around it; our part never raises."""

from __future__ import annotations

import inspect
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.jsonable import jsonable

# span id → (input messages, system prompt, model id) of a running chat span
_inputs: dict[int, tuple[list[Any], Any, str | None]] = {}


def _bind(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        return dict(inspect.signature(fn).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return dict(kwargs)


def _sid(span: Any) -> int | None:
    if span is None or not hasattr(span, "get_span_context"):
        return None
    return span.get_span_context().span_id


def _tool_calls(message: Any) -> list[tuple[str | None, str | None]]:
    calls = []
    for block in (message or {}).get("content") or ():
        use = block.get("toolUse") if isinstance(block, dict) else None
        if isinstance(use, dict):
            calls.append((use.get("toolUseId"), use.get("name")))
    return calls


@never_raise("strands chat start")
def _after_start_model(span: Any, bound: dict[str, Any]) -> None:
    if span is None or not span.is_recording():
        return
    mc.claim(span)
    if sink.active() is None:
        return
    messages = jsonable(list(bound.get("messages") or []))
    system = bound.get("system_prompt")
    if system is None and bound.get("system_prompt_content"):
        system = jsonable(bound["system_prompt_content"])
    _inputs[span.get_span_context().span_id] = (messages, system, bound.get("model_id"))


def start_model(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    span = wrapped(*args, **kwargs)
    _after_start_model(span, _bind(wrapped, args, kwargs))
    return span


@never_raise("strands chat end")
def _before_end_model(bound: dict[str, Any]) -> None:
    span = bound.get("span")
    sid = _sid(span)
    if sid is None:
        return
    info = mc.release(span)
    inputs = _inputs.pop(sid, None)
    if not span.is_recording():
        return
    message = bound.get("message")
    stop_reason = bound.get("stop_reason")
    attrs: dict[str, Any] = {}
    if stop_reason:
        attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = [str(stop_reason)]
    provider = info.get("provider")
    attributes = getattr(span, "attributes", None) or {}
    if provider and semconv.GEN_AI_PROVIDER_NAME not in attributes:
        attrs[semconv.GEN_AI_PROVIDER_NAME] = provider
    calls = _tool_calls(message)
    if calls:
        attrs[semconv.TOOL_CALL_IDS] = [c or "" for c, _ in calls]
        attrs[semconv.TOOL_CALL_NAMES] = [n or "" for _, n in calls]
        for cid, name in calls:
            span.add_event(
                mc.TOOL_CALL_EVENT,
                {semconv.GEN_AI_TOOL_NAME: name or "", semconv.GEN_AI_TOOL_CALL_ID: cid or ""},
            )
    span.set_attributes(attrs)
    rec = sink.active()
    if rec is None or inputs is None:
        return
    messages, system, model_id = inputs
    output = [jsonable(message)] if message else []
    content: dict[str, Any] = {"input_messages": messages, "output_messages": output}
    if system is not None:
        content["system_instructions"] = system
    rec.attach_content(span, content)
    model = model_id or info.get("model")
    mc.record_snapshot(
        rec,
        f"chat {model}" if model else "chat",
        messages + output,
        system,
        messages,
        output,
        {"type": "strands", "model_id": model, "provider": provider or "strands-agents"},
        span,
    )


def end_model(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    _before_end_model(_bind(wrapped, args, kwargs))
    return wrapped(*args, **kwargs)


@never_raise("strands span error")
def _before_error(bound: dict[str, Any]) -> None:
    span = bound.get("span")
    sid = _sid(span)
    if sid is None:
        return
    mc.release(span)
    inputs = _inputs.pop(sid, None)
    rec = sink.active()
    if rec is not None and inputs is not None and span.is_recording():
        content: dict[str, Any] = {"input_messages": inputs[0], "output_messages": []}
        if inputs[1] is not None:
            content["system_instructions"] = inputs[1]
        rec.attach_content(span, content)


def end_with_error(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    _before_error(_bind(wrapped, args, kwargs))
    return wrapped(*args, **kwargs)


@never_raise("strands agent start")
def _after_start_agent(span: Any, bound: dict[str, Any]) -> None:
    if span is None or not span.is_recording() or sink.active() is None:
        return
    gs.record_content(span, agent_input=jsonable(list(bound.get("messages") or [])))
    if bound.get("system_prompt"):
        gs.record_content(span, system_prompt=bound["system_prompt"])


def start_agent(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    span = wrapped(*args, **kwargs)
    _after_start_agent(span, _bind(wrapped, args, kwargs))
    return span


@never_raise("strands agent end")
def _before_end_agent(bound: dict[str, Any]) -> None:
    span = bound.get("span")
    response = bound.get("response")
    if span is None or response is None or not span.is_recording() or sink.active() is None:
        return
    message = getattr(response, "message", None)
    gs.record_content(span, agent_output=jsonable(message) if message is not None else str(response))


def end_agent(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    _before_end_agent(_bind(wrapped, args, kwargs))
    return wrapped(*args, **kwargs)


@never_raise("strands agent turn")
def _before_end_turn(agent: Any, response: Any) -> None:
    span = getattr(agent, "trace_span", None)
    rec = sink.active()
    if rec is None or response is None or span is None or not span.is_recording():
        return
    messages = jsonable(list(getattr(agent, "messages", None) or []))
    if not messages:
        return
    system = getattr(agent, "system_prompt", None)
    content: dict[str, Any] = {"input_messages": messages[:-1], "output_messages": messages[-1:]}
    if system is not None:
        content["system_instructions"] = system
    rec.attach_content(span, content)
    model = getattr(agent, "model", None)
    config = getattr(model, "config", None)
    model_id = config.get("model_id") if isinstance(config, dict) else None
    name = getattr(agent, "name", None) or "agent"
    mc.record_snapshot(
        rec,
        f"invoke_agent {name}",
        messages,
        system,
        messages[:-1],
        messages[-1:],
        {
            "type": type(model).__name__ if model is not None else "strands",
            "model_id": model_id,
            "provider": "strands-agents",
        },
        span,
    )


def end_turn(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``Agent._end_agent_trace_span``: the agent's whole conversation at the end of its turn (as
    ``agent.messages`` holds it, metadata included) and a snapshot of it."""
    bound = _bind(wrapped, args, kwargs)
    _before_end_turn(instance, bound.get("response"))
    return wrapped(*args, **kwargs)
