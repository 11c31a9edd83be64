"""``chat``: request (``model``, ``messages``, ``tools``, ``options``), response (a
``ChatResponse``), and a stream's responses put together (content, thinking and tool calls
arrive in pieces; the last one, ``done``, carries ``done_reason`` and the token counts).

Ollama's messages are chat messages (``role``, ``content``, ``tool_calls`` whose ``function``
has ``name`` and ``arguments``; a tool's result is ``role: tool``); Ollama gives no response id
and no tool-call id (a server that sends one has it kept).

The wrappers of every method (``chat``, ``generate``, ``embed``) and what ``generate`` shares
with ``chat`` (:class:`StreamingSpec`: the request's options, a stream read as it is consumed)
are here too."""

from __future__ import annotations

import inspect
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.jsonable import is_system_role, jsonable, text_of
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult
from otel_agent_trace.instrumentation._genai.params import messages_list
from otel_agent_trace.instrumentation._genai.streams import AsyncLazyStreamProxy, LazyStreamProxy
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.session_format.messages import openai_chat_to_semconv as to_semconv

PROVIDER = "ollama"
_OPTIONS = (
    ("temperature", semconv.GEN_AI_REQUEST_TEMPERATURE),
    ("top_p", semconv.GEN_AI_REQUEST_TOP_P),
    ("top_k", semconv.GEN_AI_REQUEST_TOP_K),
    ("num_predict", semconv.GEN_AI_REQUEST_MAX_TOKENS),
    ("seed", semconv.GEN_AI_REQUEST_SEED),
    ("frequency_penalty", semconv.GEN_AI_REQUEST_FREQUENCY_PENALTY),
    ("presence_penalty", semconv.GEN_AI_REQUEST_PRESENCE_PENALTY),
)


def _named(names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name (read only: the client is called with them as given)."""
    if not args:
        return kwargs
    return {**dict(zip(names, args, strict=False)), **kwargs}


def sync_wrapper(spec: CallSpec, names: tuple[str, ...], patches: Patches) -> Any:
    """The wrapper of a ``Client`` method (or the module's function) whose positional parameters
    are ``names``."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(_named(names, args, kwargs), patches)
        if call is None:
            return wrapped(*args, **kwargs)
        return spec.finish(call, call.call(wrapped, args, kwargs), is_async=False)

    return wrapper


def async_wrapper(spec: CallSpec, names: tuple[str, ...], patches: Patches) -> Any:
    """:func:`sync_wrapper` for an ``AsyncClient`` method."""

    async def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(_named(names, args, kwargs), patches)
        if call is None:
            return await wrapped(*args, **kwargs)
        return spec.finish(call, await call.acall(wrapped, args, kwargs), is_async=True)

    return wrapper


def _options(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, dict):
        options = {k: v for k, v in dict(options).items() if v is not None}  # ollama.Options
    attrs: dict[str, Any] = {}
    for key, attr in _OPTIONS:
        value = options.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            attrs[attr] = value
    stop = options.get("stop")
    if isinstance(stop, (list, tuple)) and stop:
        attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [str(s) for s in stop]
    return attrs


def _tool(tool: Any) -> Any:
    """A tool as the request sends it (a Python function is described as ``ollama`` does)."""
    if callable(tool) and not hasattr(tool, "model_dump"):
        from ollama._utils import convert_function_to_tool

        tool = convert_function_to_tool(tool)
    return jsonable(tool)


class StreamingSpec(CallSpec):
    """What ``chat`` and ``generate`` share: the request (``model``, ``options``, ``stream``) and
    the end of the call (a generator of responses, ``stream=True``, is read lazily as it is
    consumed; anything else is one response)."""

    provider = PROVIDER
    to_semconv = staticmethod(to_semconv)
    operation_method = ""
    positional: tuple[str, ...] = ()

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        model = kwargs.get("model")
        return (
            (model or None) if isinstance(model, str) else None,
            _options(kwargs.get("options")),
            (kwargs.get("stream") is True),
        )

    def is_stream(self, response: Any) -> bool:
        return inspect.isgenerator(response) or inspect.isasyncgen(response)

    def finish(self, call: ModelCall, response: Any, *, is_async: bool) -> Any:
        if inspect.isgenerator(response):
            return LazyStreamProxy(response, call, self.accumulator())
        if inspect.isasyncgen(response):
            return AsyncLazyStreamProxy(response, call, self.accumulator())
        return super().finish(call, response, is_async=is_async)


class ChatSpec(StreamingSpec):
    """``chat(model, messages, *, tools, stream, options, …)``."""

    operation = semconv.OP_CHAT
    operation_method = "chat"
    positional = ("model", "messages")

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        messages = [jsonable(m) for m in messages_list(kwargs.get("messages")) or []]
        texts = [
            text_of(m.get("content"))
            for m in messages
            if isinstance(m, dict) and is_system_role(m.get("role"))
        ]
        texts = [t for t in texts if t]
        system = None if not texts else texts[0] if len(texts) == 1 else texts
        tools = kwargs.get("tools")
        tools = [_tool(t) for t in tools] if isinstance(tools, (list, tuple)) else None
        return messages, system, tools

    def result(self, response: Any, content: bool = True) -> ModelResult:
        result = _facts(response)
        message = getattr(response, "message", None)
        if message is not None:
            for call in getattr(message, "tool_calls", None) or ():
                result.tool_calls.append((_call_id(call), getattr(call.function, "name", None)))
            if content:
                result.output_messages = [jsonable(message)]
        return result

    def accumulator(self) -> Accumulator:
        return Accumulator()


def _call_id(call: Any) -> str | None:
    found = getattr(call, "id", None)
    return found if isinstance(found, str) and found else None


def _facts(response: Any) -> ModelResult:
    result = ModelResult()
    result.response_model = getattr(response, "model", None)
    reason = getattr(response, "done_reason", None)
    if isinstance(reason, str) and reason:
        result.finish_reasons = [reason]
    result.input_tokens = getattr(response, "prompt_eval_count", None)
    result.output_tokens = getattr(response, "eval_count", None)
    return result


class Accumulator:
    """The message of a stream of ``ChatResponse``s, and the facts of its last (``done``) one."""

    def __init__(self) -> None:
        self.last: Any = None
        self.role = "assistant"
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.tool_calls: list[Any] = []

    def observe(self, item: Any) -> None:
        self.last = item
        message = getattr(item, "message", None)
        if message is None:
            return
        self.role = getattr(message, "role", None) or self.role
        if getattr(message, "content", None):
            self.content.append(message.content)
        if getattr(message, "thinking", None):
            self.thinking.append(message.thinking)
        self.tool_calls.extend(getattr(message, "tool_calls", None) or ())

    def result(self) -> ModelResult:
        result = _facts(self.last) if self.last is not None else ModelResult()
        message: dict[str, Any] = {"role": self.role, "content": "".join(self.content)}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            message["tool_calls"] = [jsonable(c) for c in self.tool_calls]
            result.tool_calls = [(_call_id(c), getattr(c.function, "name", None)) for c in self.tool_calls]
        if self.last is not None:
            result.output_messages = [message]
        return result
