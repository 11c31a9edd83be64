"""Wrappers of Strands' ``Tracer`` methods: each calls Strands first or last, unchanged, and
adds our content/snapshot around it; our part never raises."""

from __future__ import annotations

import contextvars
import inspect
from typing import Any

from opentelemetry.trace import SpanKind

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.jsonable import jsonable

# span id → (input messages, system prompt, model id) of a running chat span
_inputs: dict[int, tuple[list[Any], Any, str | None]] = {}
# span id → (the Strands model object, the names of the tools offered) of a running chat span
_models: dict[int, tuple[Any, list[str]]] = {}
# span id → (the stop reason in the provider's own words, the response model) as ``format_chunk``
# saw them before Strands mapped them (OpenAI's ``tool_calls`` / ``stop`` / ``length`` rather than
# ``tool_use`` / ``end_turn``; Ollama's ``done_reason`` and ``model``)
_stops: dict[int, tuple[str | None, str | None]] = {}
# the model id of the chat span Strands is starting (read by the ``Tracer._start_span`` wrapper)
_starting: contextvars.ContextVar[str | None] = contextvars.ContextVar("agent_trace_strands", default=None)

# Strands' model classes by module → the provider (``gen_ai.provider.name``) they call, used when
# no instrumented SDK call underneath says it (Ollama, Bedrock, ...).
_PROVIDERS = {
    "openai": "openai",
    "openai_responses": "openai",
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "ollama": "ollama",
    "gemini": "gcp.gemini",
    "mistral": "mistral_ai",
    "litellm": "litellm",
    "llamaapi": "meta",
    "llamacpp": "llama.cpp",
    "sagemaker": "aws.sagemaker",
    "writer": "writer",
}


def provider_of(model: Any) -> str | None:
    """The provider a Strands model object calls (from its module: ``strands.models.<name>``)."""
    module = type(model).__module__ if model is not None else ""
    if not module.startswith("strands.models."):
        return None
    return _PROVIDERS.get(module.rsplit(".", 1)[-1])


def model_info(model: Any, model_id: str | None, provider: str | None) -> dict[str, Any]:
    """``model_info`` of a snapshot, one shape for every snapshot of a run (DevDuck's keys)."""
    return {
        "type": type(model).__name__ if model is not None else "strands",
        "model_id": model_id,
        "provider": provider or provider_of(model) or "strands-agents",
    }


def _model_id(model: Any) -> str | None:
    config = getattr(model, "config", None)
    value = config.get("model_id") if isinstance(config, dict) else None
    return value if isinstance(value, str) else None


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
    bound = _bind(wrapped, args, kwargs)
    model_id = bound.get("model_id")
    token = _starting.set(model_id if isinstance(model_id, str) and model_id else "")
    try:
        span = wrapped(*args, **kwargs)
    finally:
        _starting.reset(token)
    _after_start_model(span, bound)
    return span


def start_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``Tracer._start_span``: the ``chat`` span Strands starts for a model call is named
    ``chat {model}`` and is of kind CLIENT, as a model span of an SDK (a kind cannot change later)."""
    model_id = _starting.get()
    if model_id is not None:
        _starting.set(None)  # only the chat span itself, not a span started under it
        args, kwargs = _as_model_span(args, kwargs, model_id)
    return wrapped(*args, **kwargs)


def _as_model_span(args: tuple[Any, ...], kwargs: dict[str, Any], model_id: str) -> tuple[Any, Any]:
    """``_start_span(span_name, parent_span, attributes, span_kind, ...)`` with the name and kind
    of a model span, when it is the ``chat`` span (anything else is passed on as it was)."""
    if (args[0] if args else kwargs.get("span_name")) != "chat":
        return args, kwargs
    name = f"chat {model_id}" if model_id else "chat"
    items = list(args)
    kwargs = dict(kwargs)
    if items:
        items[0] = name
    else:
        kwargs["span_name"] = name
    if len(items) > 3:
        items[3] = SpanKind.CLIENT
    else:
        kwargs["span_kind"] = SpanKind.CLIENT
    return tuple(items), kwargs


@never_raise("strands model stream")
def _note_model(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    from opentelemetry import trace

    span = trace.get_current_span()
    sid = _sid(span)
    if sid is None or sid not in mc._claimed:  # only a chat span of Strands we are following
        return
    model = args[0] if args else kwargs.get("model")
    specs = args[3] if len(args) > 3 else kwargs.get("tool_specs")
    names = [str(spec.get("name")) for spec in specs or () if isinstance(spec, dict) and spec.get("name")]
    _models[sid] = (model, names)


@never_raise("strands model chunk")
def _note_stop(event: Any) -> None:
    kind = event.get("chunk_type") if isinstance(event, dict) else None
    if kind not in ("message_stop", "metadata"):
        return
    from opentelemetry import trace

    sid = _sid(trace.get_current_span())
    if sid is None or sid not in mc._claimed:
        return
    data = event.get("data")
    reason, model = _stops.get(sid, (None, None))
    if kind == "message_stop" and isinstance(data, str) and data:
        reason = data
    elif kind == "metadata":  # Ollama's last response: its own done_reason and model
        done = getattr(data, "done_reason", None)
        name = getattr(data, "model", None)
        if isinstance(done, str) and done:
            reason = done
            model = name if isinstance(name, str) and name else model
    _stops[sid] = (reason, model)


def format_chunk(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``<Provider>Model.format_chunk({"chunk_type": "message_stop", "data": reason})``: the
    provider's stop reason, before Strands maps it to its own words."""
    _note_stop(args[0] if args else kwargs.get("event"))
    return wrapped(*args, **kwargs)


def stream_messages(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``stream_messages(model, system_prompt, messages, tool_specs, ...)``, called with Strands'
    chat span current: which model object answers it (its provider) and the tools offered."""
    _note_model(args, kwargs)
    return wrapped(*args, **kwargs)


@never_raise("strands chat end")
def _before_end_model(bound: dict[str, Any]) -> None:
    span = bound.get("span")
    sid = _sid(span)
    if sid is None or span is None:
        return
    info = mc.release(span)
    inputs = _inputs.pop(sid, None)
    model, tools = _models.pop(sid, (None, []))
    stop, response_model = _stops.pop(sid, None) or (None, None)
    if not span.is_recording():
        return
    message = bound.get("message")
    attrs = _response_attributes(info.get("result"), stop or bound.get("stop_reason"))
    if response_model and semconv.GEN_AI_RESPONSE_MODEL not in attrs:
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = response_model
    provider = info.get("provider") or provider_of(model)
    attributes = getattr(span, "attributes", None) or {}
    if provider and semconv.GEN_AI_PROVIDER_NAME not in attributes:
        attrs[semconv.GEN_AI_PROVIDER_NAME] = provider
    calls = _tool_calls(message)
    if calls:
        attrs[semconv.TOOL_CALL_IDS] = [c or "" for c, _ in calls]
        attrs[semconv.TOOL_CALL_NAMES] = [n or "" for _, n in calls]  # as a bare SDK call's span
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
    name = model_id or info.get("model")
    mc.record_snapshot(
        rec,
        f"chat {name}" if name else "chat",
        messages + output,
        system,
        messages,
        output,
        model_info(model, name, provider),
        span,
        tools,
    )


def _response_attributes(result: Any, stop_reason: Any) -> dict[str, Any]:
    """What the SDK call underneath returned (response id and model, the provider's own finish
    reasons), when an instrumented SDK made it; else Strands' stop reason as the finish reason."""
    attrs: dict[str, Any] = {}
    if result is not None:
        for key, value in (
            (semconv.GEN_AI_RESPONSE_ID, getattr(result, "response_id", None)),
            (semconv.GEN_AI_RESPONSE_MODEL, getattr(result, "response_model", None)),
        ):
            if value:
                attrs[key] = value
        reasons = getattr(result, "finish_reasons", None)
        if reasons:
            attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = [str(r) for r in reasons]
    if semconv.GEN_AI_RESPONSE_FINISH_REASONS not in attrs and stop_reason:
        attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = [str(stop_reason)]
    return attrs


def end_model(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    _before_end_model(_bind(wrapped, args, kwargs))
    return wrapped(*args, **kwargs)


@never_raise("strands span error")
def _before_error(bound: dict[str, Any]) -> None:
    span = bound.get("span")
    sid = _sid(span)
    if sid is None or span is None:
        return
    mc.release(span)
    inputs = _inputs.pop(sid, None)
    _models.pop(sid, None)
    _stops.pop(sid, None)
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
    name = getattr(agent, "name", None) or "agent"
    mc.record_snapshot(
        rec,
        f"invoke_agent {name}",
        messages,
        system,
        messages[:-1],
        messages[-1:],
        model_info(model, _model_id(model), None),
        span,
        [str(n) for n in getattr(agent, "tool_names", None) or ()],
    )


def end_turn(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``Agent._end_agent_trace_span``: the agent's whole conversation at the end of its turn (as
    ``agent.messages`` holds it, metadata included) and a snapshot of it."""
    bound = _bind(wrapped, args, kwargs)
    _before_end_turn(instance, bound.get("response"))
    return wrapped(*args, **kwargs)
