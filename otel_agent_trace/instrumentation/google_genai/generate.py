"""``generate_content`` / ``generate_content_stream``: the request (``model``, ``contents``,
``config``), the ``GenerateContentResponse``, and a stream's responses put together.

Messages are kept in Gemini's shape, as ``{"role": "user" | "model", "content": [parts]}`` (a
part as the SDK dumps it: ``{"text": ...}``, ``{"function_call": {"id", "name", "args"}}``,
``{"function_response": ...}``); the tools as their function declarations. With automatic function
calling (Python functions as tools) the output is every round the SDK made: the model's function
calls, the functions' responses, the answer."""

from __future__ import annotations

import inspect
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.jsonable import jsonable, text_of
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult
from otel_agent_trace.instrumentation._genai.streams import (
    AsyncLazyStreamProxy,
    AsyncStreamProxy,
    LazyStreamProxy,
    StreamProxy,
)
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.session_format.messages import gemini_to_semconv

_CONFIG = (
    ("temperature", semconv.GEN_AI_REQUEST_TEMPERATURE),
    ("top_p", semconv.GEN_AI_REQUEST_TOP_P),
    ("top_k", semconv.GEN_AI_REQUEST_TOP_K),
    ("max_output_tokens", semconv.GEN_AI_REQUEST_MAX_TOKENS),
    ("seed", semconv.GEN_AI_REQUEST_SEED),
    ("presence_penalty", semconv.GEN_AI_REQUEST_PRESENCE_PENALTY),
    ("frequency_penalty", semconv.GEN_AI_REQUEST_FREQUENCY_PENALTY),
)


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _message(content: Any) -> dict[str, Any]:
    """A ``Content`` as a session message: its role, its parts as the SDK dumps them."""
    return {"role": _get(content, "role") or "user", "content": jsonable(_get(content, "parts") or [])}


def _declarations(tools: Any) -> list[Any]:
    """The function declarations a request offers (a Python function: its name and docstring)."""
    out: list[Any] = []
    for tool in tools or ():
        if callable(tool) and not hasattr(tool, "model_dump"):
            doc = inspect.getdoc(tool) or ""
            out.append({"name": getattr(tool, "__name__", repr(tool)), "description": doc.split("\n\n")[0]})
            continue
        declarations = _get(tool, "function_declarations")
        if declarations:
            out.extend(jsonable(d) for d in declarations)
        else:
            out.append(jsonable(tool))  # search, code execution, …: as given
    return out


class GenerateSpec(CallSpec):
    provider = "gcp.gemini"  # a Vertex AI client's calls: gcp.vertex_ai (_provider)
    operation = semconv.OP_GENERATE_CONTENT
    to_semconv = staticmethod(gemini_to_semconv)

    def __init__(self, stream: bool):
        self.stream = stream

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        model = kwargs.get("model")
        if isinstance(model, str):
            model = model.rpartition("/")[2] if model.startswith("models/") else model
        else:
            model = None
        attrs: dict[str, Any] = {}
        config = kwargs.get("config")
        if config is not None:
            for key, attr in _CONFIG:
                value = _get(config, key)
                if _number(value):
                    attrs[attr] = value
            count = _get(config, "candidate_count")
            if _number(count) and count != 1:
                attrs[semconv.GEN_AI_REQUEST_CHOICE_COUNT] = count
            stop = _get(config, "stop_sequences")
            if isinstance(stop, (list, tuple)) and stop:
                attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [str(s) for s in stop]
        return model, attrs, self.stream

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        from google.genai import _transformers

        messages = [_message(c) for c in _transformers.t_contents(kwargs.get("contents"))]
        config = kwargs.get("config")
        system = _get(config, "system_instruction") if config is not None else None
        if system is not None and not isinstance(system, str):
            system = text_of(_message(_transformers.t_content(system))["content"])
        tools = _declarations(_get(config, "tools")) if config is not None else None
        return messages, system, tools or None

    def is_stream(self, response: Any) -> bool:
        return self.stream

    def finish(self, call: ModelCall, response: Any, *, is_async: bool, functions: bool = False) -> Any:
        """``functions``: Python functions among the tools (automatic function calling)."""
        if not self.stream:
            turns = _afc_turns(response, len(call.input_messages)) if call.content else None
            if not turns:
                return super().finish(call, response, is_async=is_async)
            try:  # the SDK called the functions itself: the rounds it made are the call's output too
                result = self.result(response, True)
                result.output_messages[:0] = turns
                result.tool_calls[:0] = _function_calls(turns)
                call.finish(result)
            except Exception as exc:
                if not call.ended:
                    call.finish(ModelResult())
                internal_error("finishing a model call", exc)
            return response
        if functions:  # the SDK calls them and asks again while the stream is read
            proxy = _AsyncRoundsProxy if is_async else _RoundsProxy
            return proxy(response, call, _Rounds(len(call.input_messages)))
        proxy = AsyncLazyStreamProxy if is_async else LazyStreamProxy
        acc = Accumulator() if call.mode != "adopt" else _EndsAtFinish(call)
        return proxy(response, call, acc)

    def result(self, response: Any, content: bool = True) -> ModelResult:
        acc = Accumulator()
        acc.observe(response)
        return acc.result(content)

    def accumulator(self) -> Accumulator:
        return Accumulator()


class Accumulator:
    """One response, or a stream's responses: text parts joined, other parts kept in order, the
    last finish reason and usage."""

    def __init__(self) -> None:
        self.last: Any = None
        self.candidates: dict[int, tuple[str, list[Any], list[str]]] = {}  # index → role, parts, reason

    def observe(self, response: Any) -> None:
        self.last = response
        for position, candidate in enumerate(getattr(response, "candidates", None) or ()):
            index = getattr(candidate, "index", None)
            index = index if isinstance(index, int) else position
            role, parts, reason = self.candidates.get(index, ("model", [], []))
            content = getattr(candidate, "content", None)
            if content is not None:
                role = getattr(content, "role", None) or role
                for part in getattr(content, "parts", None) or ():
                    text = getattr(part, "text", None)
                    thought = bool(getattr(part, "thought", None))
                    if (
                        isinstance(text, str)
                        and parts
                        and isinstance(parts[-1], dict)
                        and "text" in parts[-1]
                        and (bool(parts[-1].get("thought")) == thought)
                    ):
                        parts[-1]["text"] += text  # a stream's pieces of one text
                    else:
                        parts.append(dict(jsonable(part)))
            finish = getattr(candidate, "finish_reason", None)
            if finish is not None:
                reason = [str(getattr(finish, "value", finish))]
            self.candidates[index] = (role, parts, reason)

    def result(self, content: bool = True) -> ModelResult:
        result = ModelResult()
        last = self.last
        if last is None:
            return result
        result.response_model = getattr(last, "model_version", None)
        result.response_id = getattr(last, "response_id", None)
        usage = getattr(last, "usage_metadata", None)
        if usage is not None:
            result.input_tokens = getattr(usage, "prompt_token_count", None)
            result.output_tokens = getattr(usage, "candidates_token_count", None)
            result.cache_read_tokens = getattr(usage, "cached_content_token_count", None)
            result.reasoning_tokens = getattr(usage, "thoughts_token_count", None)
        for index in sorted(self.candidates):
            role, parts, reason = self.candidates[index]
            result.finish_reasons.extend(reason)
            for part in parts:
                call = part.get("function_call") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    result.tool_calls.append((call.get("id"), call.get("name")))
            if content:
                result.output_messages.append({"role": role, "content": parts})
        return result


def _afc_turns(response: Any, inputs: int) -> list[dict[str, Any]] | None:
    """With automatic function calling, the model's function calls and the SDK's function
    responses, in order (``automatic_function_calling_history`` is the input, then those)."""
    history = getattr(response, "automatic_function_calling_history", None)
    if not isinstance(history, list) or len(history) <= inputs:
        return None
    return [_message(content) for content in history[inputs:]]


def _function_calls(messages: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    calls = []
    for message in messages:
        for part in message["content"] if message["role"] == "model" else ():
            call = part.get("function_call") if isinstance(part, dict) else None
            if isinstance(call, dict):
                calls.append((call.get("id"), call.get("name")))
    return calls


class _EndsAtFinish(Accumulator):
    """A stream under another package's model span (Google ADK's, in SSE mode): that span ends
    as soon as the chunk with the finish reason reaches it, before the stream is read to its end,
    so the call is finished as that chunk goes by (its usage comes with it)."""

    def __init__(self, call: ModelCall) -> None:
        super().__init__()
        self.call = call

    def observe(self, response: Any) -> None:
        super().observe(response)
        candidates = getattr(response, "candidates", None)
        if candidates and all(getattr(c, "finish_reason", None) is not None for c in candidates):
            self.call.finish(self.result())


class _Rounds(Accumulator):
    """A stream with automatic function calling: the SDK reads each round's chunks, calls the
    functions, and streams the next round; a chunk of a later round carries the rounds so far
    (``automatic_function_calling_history``: the input, then the earlier rounds' model contents
    and function responses). The output is those, then the last round's answer."""

    def __init__(self, inputs: int) -> None:
        super().__init__()
        self.inputs = inputs
        self.earlier: list[dict[str, Any]] = []

    def observe(self, response: Any) -> None:
        history = getattr(response, "automatic_function_calling_history", None)
        if isinstance(history, list) and len(history) > self.inputs + len(self.earlier):
            self.earlier = [_message(content) for content in history[self.inputs :]]
            self.candidates = {}  # a new round
        super().observe(response)

    def result(self, content: bool = True) -> ModelResult:
        result = super().result(content)
        if content:
            result.output_messages[:0] = self.earlier
        result.tool_calls[:0] = _function_calls(self.earlier)
        return result


class _RoundsProxy(LazyStreamProxy):
    """The model span current while every chunk is read: the functions the SDK calls (their
    tool spans) and the next rounds' requests (their exchanges) are under it."""

    def __next__(self) -> Any:
        if self._self_done:
            return super().__next__()
        token = self._self_call.activate()
        try:
            return StreamProxy.__next__(self)
        finally:
            self._self_call.deactivate(token)


class _AsyncRoundsProxy(AsyncLazyStreamProxy):
    """:class:`_RoundsProxy` for ``client.aio``."""

    async def __anext__(self) -> Any:
        if self._self_done:
            return await super().__anext__()
        token = self._self_call.activate()
        try:
            return await AsyncStreamProxy.__anext__(self)
        finally:
            self._self_call.deactivate(token)


def _functions(kwargs: dict[str, Any]) -> bool:
    config = kwargs.get("config")
    tools = _get(config, "tools") if config is not None else None
    return any(callable(t) and not hasattr(t, "model_dump") for t in tools or ())


def sync_wrapper(spec: GenerateSpec, patches: Patches) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(kwargs, patches)
        if call is None:
            return wrapped(*args, **kwargs)
        _provider(call, instance)
        response = call.call(wrapped, args, kwargs)
        return spec.finish(call, response, is_async=False, functions=spec.stream and _functions(kwargs))

    return wrapper


def async_wrapper(spec: GenerateSpec, patches: Patches) -> Any:
    async def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(kwargs, patches)
        if call is None:
            return await wrapped(*args, **kwargs)
        _provider(call, instance)
        response = await call.acall(wrapped, args, kwargs)
        return spec.finish(call, response, is_async=True, functions=spec.stream and _functions(kwargs))

    return wrapper


def _provider(call: ModelCall, models: Any) -> None:
    """A Vertex AI client's call (``Client(vertexai=True)``) is ``gcp.vertex_ai``."""
    if getattr(getattr(models, "_api_client", None), "vertexai", False) is True:
        call.provider = "gcp.vertex_ai"
        if call.mode == "own":
            call.span.set_attribute(semconv.GEN_AI_PROVIDER_NAME, call.provider)
