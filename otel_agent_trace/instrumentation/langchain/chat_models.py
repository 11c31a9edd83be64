"""LangChain chat models (``BaseChatModel.invoke/ainvoke/stream/astream``): one ``chat {model}``
span per call, described from LangChain's own view (``_get_ls_params``), with the model's
messages in LangChain's roles. The provider SDK call underneath (``ChatOpenAI`` → ``openai``)
makes no second span: it sees this model span as current (see ``_genai.model_call.begin``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.jsonable import jsonable, text_of
from otel_agent_trace.instrumentation._genai.scoped import aiterate_in_span, iterate_in_span
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.langchain.messages import PROVIDERS, to_dict, to_semconv

# span id of a running chat call of ours → [the call, the response id the provider's raw chunks
# carried] (langchain-openai drops the id when it turns a streamed chunk into a message chunk)
_following: dict[int, list[Any]] = {}


def _follow(call: mc.ModelCall) -> None:
    if call.mode == "own":
        _following[call.span.get_span_context().span_id] = [call, None]


def _with_chunk_id(call: mc.ModelCall, result: mc.ModelResult) -> mc.ModelResult:
    """The result, with the response id of its raw chunks when the message lost it."""
    state = _following.pop(call.span.get_span_context().span_id, None)
    rid = state[1] if state is not None else None
    if result.response_id is None and rid:
        result.response_id = rid
    return result


def _forget(call: mc.ModelCall) -> None:
    _following.pop(call.span.get_span_context().span_id, None)


def note_raw_chunk(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``BaseChatOpenAI._convert_chunk_to_generation_chunk(chunk, ...)``, for the chat span
    current while the stream is read: the raw chunk's ``id`` (the chat completion id); and at the
    first one, that the model streams and when its first chunk came (also under ``invoke``, which
    streams inside when a graph streams its messages)."""
    try:
        chunk = args[0] if args else kwargs.get("chunk")
        if _following and isinstance(chunk, dict):
            state = _following.get(trace.get_current_span().get_span_context().span_id)
            if state is not None:
                call = state[0]
                if call.first_chunk_ns is None:
                    call.first_chunk()
                    call.span.set_attribute(semconv.GEN_AI_REQUEST_STREAM, True)
                rid = chunk.get("id")
                if state[1] is None and isinstance(rid, str) and rid:
                    state[1] = rid
    except Exception as exc:
        internal_error("reading a langchain-openai raw chunk", exc)
    return wrapped(*args, **kwargs)


def _input_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else kwargs.get("input")


def begin(
    instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], *, stream: bool, patches: Patches
) -> mc.ModelCall | None:
    try:
        call_kwargs = {k: v for k, v in kwargs.items() if k not in ("input", "config")}
        ls = instance._get_ls_params(**call_kwargs) or {}
        raw_provider = ls.get("ls_provider") or "langchain"
        provider = PROVIDERS.get(raw_provider, raw_provider)
        params: dict[str, Any] = {}
        if isinstance(ls.get("ls_temperature"), (int, float)):
            params[semconv.GEN_AI_REQUEST_TEMPERATURE] = ls["ls_temperature"]
        if isinstance(ls.get("ls_max_tokens"), int):
            params[semconv.GEN_AI_REQUEST_MAX_TOKENS] = ls["ls_max_tokens"]
        if ls.get("ls_stop"):
            params[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [str(s) for s in ls["ls_stop"]]
        model = ls.get("ls_model_name")
        call = mc.begin(provider, semconv.OP_CHAT, model, params, stream=stream, tracer=patches.tracer())
        if call is not None:
            _follow(call)
        if call is not None and call.wants_content:
            messages = [to_dict(m) for m in instance._convert_input(_input_of(args, kwargs)).to_messages()]
            systems = [text_of(m.get("content")) for m in messages if m.get("role") == "system"]
            tools = kwargs.get("tools")
            call.set_input(
                messages,
                systems[0] if len(systems) == 1 else (systems or None),
                jsonable(tools) if isinstance(tools, (list, tuple)) else None,
                to_semconv,
            )
        return call
    except Exception as exc:
        internal_error("starting a langchain chat model call", exc)
        return None


def _responses_reason(meta: dict[str, Any], message: Any) -> str | None:
    """A Responses API answer (``use_responses_api``) has a status, not a finish reason: the
    reason as the bare SDK's span has it (``tool_calls``, ``stop``, or why it is incomplete)."""
    if meta.get("object") != "response":
        return None
    status = meta.get("status")
    if status == "completed":
        return "tool_calls" if getattr(message, "tool_calls", None) else "stop"
    if status == "incomplete":
        details = meta.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return str(reason or status)
    return None


def result_of(message: Any) -> mc.ModelResult:
    result = mc.ModelResult()
    if message is None:
        return result
    meta = getattr(message, "response_metadata", None) or {}
    result.response_model = meta.get("model_name") or meta.get("model")
    rid = meta.get("id") or getattr(message, "id", None)
    if isinstance(rid, str) and not rid.startswith(("lc_", "run-")):  # not LangChain's own run ids
        result.response_id = rid
    reason = meta.get("finish_reason") or meta.get("stop_reason") or _responses_reason(meta, message)
    if reason:
        result.finish_reasons = [str(reason)]
    usage = getattr(message, "usage_metadata", None) or {}
    if usage:
        result.input_tokens = usage.get("input_tokens")
        result.output_tokens = usage.get("output_tokens")
        read = (usage.get("input_token_details") or {}).get("cache_read")
        if read is not None:
            result.cache_read_tokens = read
        reasoning = (usage.get("output_token_details") or {}).get("reasoning")
        if reasoning is not None:
            result.reasoning_tokens = reasoning
    out = to_dict(message)
    result.output_messages = [out]
    result.tool_calls = [(c.get("id"), c.get("name")) for c in out.get("tool_calls") or ()]
    return result


def _finish(call: mc.ModelCall, message: Any) -> None:
    try:
        call.finish(_with_chunk_id(call, result_of(message)))
    except Exception as exc:
        internal_error("finishing a langchain chat model call", exc)
        call.finish(mc.ModelResult())


def wrapper(method: str, patches: Patches) -> Callable[..., Any]:
    """The ``wrapt`` wrapper of ``BaseChatModel.<method>``; spans from ``patches``' tracer."""
    return _WRAPPERS[method](patches)


def _invoke(patches: Patches) -> Callable[..., Any]:
    def invoke(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = begin(instance, args, kwargs, stream=False, patches=patches)
        if call is None:
            return wrapped(*args, **kwargs)
        try:
            message = call.call(wrapped, args, kwargs)
        except BaseException:
            _forget(call)
            raise
        _finish(call, message)
        return message

    return invoke


def _ainvoke(patches: Patches) -> Callable[..., Any]:
    async def ainvoke(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = begin(instance, args, kwargs, stream=False, patches=patches)
        if call is None:
            return await wrapped(*args, **kwargs)
        try:
            message = await call.acall(wrapped, args, kwargs)
        except BaseException:
            _forget(call)
            raise
        _finish(call, message)
        return message

    return ainvoke


class _Streamed:
    __slots__ = ("call", "span", "message")

    def __init__(self, call: mc.ModelCall):
        self.call = call
        self.span = call.span
        self.message: Any = None


def _observe(state: _Streamed, chunk: Any) -> None:
    try:
        state.call.first_chunk()
        state.message = chunk if state.message is None else state.message + chunk
    except Exception as exc:
        internal_error("reading a langchain stream chunk", exc)


def _end(state: _Streamed, error: BaseException | None, exhausted: bool) -> None:
    if error is not None:
        _forget(state.call)
        state.call.fail(error, result_of(state.message) if state.message is not None else None)
    else:
        try:
            state.call.finish(_with_chunk_id(state.call, result_of(state.message)), abandoned=not exhausted)
        except Exception as exc:
            _forget(state.call)
            state.call.finish(mc.ModelResult(), abandoned=not exhausted)
            internal_error("finishing a langchain chat model stream", exc)


def _streaming(iterate: Callable[..., Any]) -> Callable[[Patches], Callable[..., Any]]:
    def make(patches: Patches) -> Callable[..., Any]:
        def stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            def start() -> _Streamed | None:
                call = begin(instance, args, kwargs, stream=True, patches=patches)
                if call is not None and call.mode != "own":
                    _forget(call)
                    return None
                return None if call is None else _Streamed(call)

            return iterate(wrapped(*args, **kwargs), start, _observe, _end)

        return stream

    return make


_WRAPPERS: dict[str, Callable[[Patches], Callable[..., Any]]] = {
    "invoke": _invoke,
    "ainvoke": _ainvoke,
    "stream": _streaming(iterate_in_span),
    "astream": _streaming(aiterate_in_span),
}
