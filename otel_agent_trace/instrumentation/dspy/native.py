"""DSPy 3.4's native engine (``dspy.clients.engines.lm15_engine``): its model calls.

``engine="auto"`` (the default) sends the providers DSPy's vendored lm15 knows (``openai/…``,
``anthropic/…``, ``gemini/…``) through ``LM15Engine.complete`` / ``stream`` (and the async
engine's), one call per attempt, on lm15's own socket transport: neither LiteLLM nor an HTTP
client we instrument sees it. A ``chat {model}`` CLIENT span per call is made here, through the
shared :func:`~otel_agent_trace.instrumentation._genai.model_call.begin` (so the request's
messages and the answer reach the session, with a snapshot, like every model call's). The
LiteLLM engine never calls these methods: its calls are ``agent_trace_litellm``'s, once.

The request is an lm15 ``Request``; it is read in OpenAI's chat shape (DSPy's own conversion,
``lm15_boundary.request_kwargs``, with no I/O), so its messages are recorded as the LiteLLM
engine's are. The answer is an lm15 ``Response`` (a stream: lm15 ``start`` / ``delta`` /
``end`` events)."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult, begin
from otel_agent_trace.instrumentation._genai.params import request_params
from otel_agent_trace.instrumentation._genai.streams import AsyncLazyStreamProxy, LazyStreamProxy

_CONFIG = ("temperature", "top_p", "top_k", "max_tokens", "seed", "frequency_penalty", "presence_penalty")


def provider_and_model(model: Any) -> tuple[str, str | None]:
    """``"openai/gpt-4o-mini"`` → ``("openai", "gpt-4o-mini")``, providers in the semantic
    conventions' names (LiteLLM's spellings, which DSPy's model strings are)."""
    if not isinstance(model, str) or not model:
        return "dspy", None
    head, _, rest = model.partition("/")
    if not rest:
        return "openai", model  # DSPy's default provider for a bare model name
    from otel_agent_trace.instrumentation.litellm.completion import PROVIDERS

    return PROVIDERS.get(head, head), rest


def _params(request: Any) -> dict[str, Any]:
    config = getattr(request, "config", None)
    kwargs: dict[str, Any] = {key: getattr(config, key, None) for key in _CONFIG}
    stop = getattr(config, "stop", None)
    if stop:
        kwargs["stop"] = list(stop)
    return request_params(kwargs)


def _chat_kwargs(request: Any) -> dict[str, Any]:
    """The request in OpenAI's chat shape (messages with the system prompt first, tools)."""
    try:
        from dspy.clients.lm15_boundary import request_kwargs

        return request_kwargs(request, "chat")
    except Exception:  # a request the chat dialect cannot write: DSPy's history view of it
        from dspy.clients.lm15_boundary import history_messages

        return {"messages": history_messages(request)}


def _start(request: Any, tracer: Any, *, stream: bool) -> ModelCall | None:
    try:
        provider, model = provider_and_model(getattr(request, "model", None))
        call = begin(provider, semconv.OP_CHAT, model, _params(request), stream=stream, tracer=tracer())
        if call is not None and call.wants_content:
            from otel_agent_trace.instrumentation.openai.chat import ChatSpec

            spec = ChatSpec((), raw_types=())
            messages, system, tools = spec.input(_chat_kwargs(request))
            call.set_input(messages, system, tools, ChatSpec.to_semconv)
        return call
    except Exception as exc:
        internal_error("starting a dspy native model call", exc)
        return None


def _usage(result: ModelResult, usage: Any) -> None:
    if usage is None:
        return
    result.input_tokens = getattr(usage, "input_tokens", None)
    result.output_tokens = getattr(usage, "output_tokens", None)
    result.cache_read_tokens = getattr(usage, "cache_read_tokens", None)
    result.cache_creation_tokens = getattr(usage, "cache_write_tokens", None)
    result.reasoning_tokens = getattr(usage, "reasoning_tokens", None)


def _assistant(text: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_call(call_id: Any, name: Any, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _result(response: Any, content: bool) -> ModelResult:
    result = ModelResult()
    result.response_id = getattr(response, "id", None)
    result.response_model = getattr(response, "model", None)
    finish = getattr(response, "finish_reason", None)
    if isinstance(finish, str) and finish:
        result.finish_reasons.append(finish)
    _usage(result, getattr(response, "usage", None))
    message = getattr(response, "message", None)
    calls: list[dict[str, Any]] = []
    for part in getattr(message, "parts", None) or ():
        if getattr(part, "type", None) == "tool_call":
            result.tool_calls.append((part.id, part.name))
            if content:
                import json

                calls.append(_tool_call(part.id, part.name, json.dumps(part.input, ensure_ascii=False)))
    if content:
        result.output_messages.append(_assistant(getattr(response, "text", None), calls))
    return result


def _finish(call: ModelCall, response: Any) -> None:
    try:
        call.finish(_result(response, call.content))
    except Exception as exc:
        if not call.ended:
            call.finish(ModelResult())
        internal_error("finishing a dspy native model call", exc)


class _Accumulator:
    """lm15 stream events → the call's result, for the shared lazy stream proxies: ``start`` (id,
    model), ``delta`` (text, tool call pieces), ``end`` (finish reason, usage, and the provider's
    frame: its id and model)."""

    __slots__ = ("facts", "text", "calls")

    def __init__(self) -> None:
        self.facts = ModelResult()
        self.text: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # part index → [id, name, arguments pieces]

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "start":
            self.facts.response_id = getattr(event, "id", None)
            self.facts.response_model = getattr(event, "model", None)
        elif kind == "delta":
            delta = event.delta
            if delta.type == "text":
                self.text.append(delta.text)
            elif delta.type == "tool_call":
                entry = self.calls.setdefault(delta.part_index, [None, None, []])
                entry[0] = entry[0] or delta.id
                entry[1] = entry[1] or delta.name
                entry[2].append(delta.input)
        elif kind == "end":  # (OpenAI's chat dialect: one for the finish, one for the usage)
            finish = getattr(event, "finish_reason", None)
            if isinstance(finish, str) and finish:
                self.facts.finish_reasons.append(finish)
            _usage(self.facts, getattr(event, "usage", None))
            frame = getattr(event, "provider_data", None)  # the provider's own last frame
            if isinstance(frame, dict):
                if isinstance(frame.get("id"), str) and frame["id"]:
                    self.facts.response_id = frame["id"]
                if isinstance(frame.get("model"), str) and frame["model"]:
                    self.facts.response_model = frame["model"]  # (the start event's is the request's)

    def result(self) -> ModelResult:
        result = self.facts
        calls = []
        for call_id, name, pieces in self.calls.values():
            result.tool_calls.append((call_id, name))
            calls.append(_tool_call(call_id, name, "".join(pieces)))
        result.output_messages.append(_assistant("".join(self.text) or None, calls))
        return result


def complete_wrapper(tracer: Any) -> Any:
    """``LM15Engine.complete(request)``: one native model call."""

    def complete(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(args[0] if args else kwargs.get("request"), tracer, stream=False)
        if call is None:
            return wrapped(*args, **kwargs)
        response = call.call(wrapped, args, kwargs)
        _finish(call, response)
        return response

    return complete


def async_complete_wrapper(tracer: Any) -> Any:
    """``AsyncLM15Engine.complete(request)``: the same, awaited."""

    async def acomplete(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(args[0] if args else kwargs.get("request"), tracer, stream=False)
        if call is None:
            return await wrapped(*args, **kwargs)
        response = await call.acall(wrapped, args, kwargs)
        _finish(call, response)
        return response

    return acomplete


def stream_wrapper(tracer: Any) -> Any:
    """``LM15Engine.stream(request)``: a generator of lm15 events; the span ends with it."""

    def stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(args[0] if args else kwargs.get("request"), tracer, stream=True)
        if call is None:
            return wrapped(*args, **kwargs)
        return LazyStreamProxy(wrapped(*args, **kwargs), call, _Accumulator())

    return stream


def async_stream_wrapper(tracer: Any) -> Any:
    """``AsyncLM15Engine.stream(request)``: an async generator of lm15 events."""

    def stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(args[0] if args else kwargs.get("request"), tracer, stream=True)
        if call is None:
            return wrapped(*args, **kwargs)
        return AsyncLazyStreamProxy(wrapped(*args, **kwargs), call, _Accumulator())

    return stream
