"""``chat.completions.create``: request, response, stream chunks and semconv message parts."""

from __future__ import annotations

from itertools import compress, count
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.jsonable import (
    SYSTEM_ROLES,
    is_system_role,
    jsonable,
    plain_messages,
    text_of,
)
from otel_agent_trace.instrumentation._genai.model_call import ModelResult
from otel_agent_trace.instrumentation._genai.params import (
    messages_list,
    model_of,
    request_params,
    stream_flag,
)
from otel_agent_trace.instrumentation.openai.responses import raw_response_types
from otel_agent_trace.session_format.messages import openai_chat_to_semconv as to_semconv

PROVIDER = "openai"


def _system(messages: list[Any], roles: list[Any], later: int) -> Any:
    """The text of the system (or developer) messages: one, a list of several, or ``None``.
    ``roles``: each message's ``role``; ``later``: where the first system role after the first
    message is, ``len(roles)`` when none is (:func:`plain_messages` carries it from the last
    conversation: a resent one costs no pass over its roles)."""
    try:
        if later == len(roles):  # (the usual: a system prompt first and no other, or none)
            if not roles or roles[0] not in SYSTEM_ROLES:
                return None
            found = [messages[0]]
        else:
            found = [messages[i] for i in compress(count(), map(SYSTEM_ROLES.__contains__, roles))]
    except TypeError:  # an unhashable role
        found = [m for m in messages if isinstance(m, dict) and is_system_role(m.get("role"))]
    texts = [text_of(m.get("content")) for m in found]
    texts = [t for t in texts if t]
    if not texts:
        return None
    return texts[0] if len(texts) == 1 else texts


def _usage(result: ModelResult, usage: Any) -> None:
    if usage is None:
        return
    result.input_tokens = getattr(usage, "prompt_tokens", None)
    result.output_tokens = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    if details is not None and getattr(details, "cached_tokens", None) is not None:
        result.cache_read_tokens = details.cached_tokens
    details = getattr(usage, "completion_tokens_details", None)
    if details is not None and getattr(details, "reasoning_tokens", None) is not None:
        result.reasoning_tokens = details.reasoning_tokens


class ChatSpec(CallSpec):
    provider = PROVIDER
    operation = semconv.OP_CHAT
    to_semconv = staticmethod(to_semconv)

    def __init__(self, stream_types: tuple[type, ...], raw_types: tuple[type, ...] | None = None):
        self.stream_types = stream_types
        self.raw_types = raw_response_types() if raw_types is None else raw_types

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        return model_of(kwargs), request_params(kwargs), stream_flag(kwargs)

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        messages = messages_list(kwargs.get("messages")) or []
        messages, roles, later = plain_messages(messages)
        tools = kwargs.get("tools")
        tools = jsonable(tools) if isinstance(tools, (list, tuple)) else None
        return messages, _system(messages, roles, later), tools

    def is_stream(self, response: Any) -> bool:
        return isinstance(response, self.stream_types)

    def result(self, response: Any, content: bool = True) -> ModelResult:
        result = ModelResult()
        choices = getattr(response, "choices", None)
        if choices is None:  # not a completion (e.g. ``parse(to=...)`` of a raw response)
            return result
        result.response_model = getattr(response, "model", None)
        result.response_id = getattr(response, "id", None)
        _usage(result, getattr(response, "usage", None))
        for choice in choices:
            if choice.finish_reason:
                result.finish_reasons.append(choice.finish_reason)
            if content:
                result.output_messages.append(jsonable(choice.message))
            for call in getattr(choice.message, "tool_calls", None) or ():
                fn = getattr(call, "function", None)
                result.tool_calls.append((getattr(call, "id", None), getattr(fn, "name", None)))
        return result

    def accumulator(self) -> ChunkAccumulator:
        return ChunkAccumulator()


class _Choice:
    __slots__ = ("role", "text", "calls", "finish")

    def __init__(self) -> None:
        self.role = "assistant"
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None


class ChunkAccumulator:
    """Builds the result of a streamed chat completion from its chunks."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Any = None
        self.choices: dict[int, _Choice] = {}

    def observe(self, chunk: Any) -> None:
        if self.id is None:
            self.id = getattr(chunk, "id", None)
            self.model = getattr(chunk, "model", None)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        for ch in getattr(chunk, "choices", None) or ():
            state = self.choices.get(ch.index)
            if state is None:
                state = self.choices[ch.index] = _Choice()
            delta = ch.delta
            if delta is not None:
                if delta.role:
                    state.role = delta.role
                if delta.content:
                    state.text.append(delta.content)
                for tc in delta.tool_calls or ():
                    call = state.calls.setdefault(tc.index, {"id": None, "name": None, "arguments": []})
                    if tc.id:
                        call["id"] = tc.id
                    fn = tc.function
                    if fn is not None:
                        if fn.name:
                            call["name"] = fn.name
                        if fn.arguments:
                            call["arguments"].append(fn.arguments)
            if ch.finish_reason:
                state.finish = ch.finish_reason

    def result(self) -> ModelResult:
        result = ModelResult()
        result.response_id = self.id
        result.response_model = self.model
        _usage(result, self.usage)
        for index in sorted(self.choices):
            state = self.choices[index]
            message: dict[str, Any] = {
                "role": state.role,
                "content": "".join(state.text) if state.text else None,
            }
            if state.calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                    }
                    for _, c in sorted(state.calls.items())
                ]
                result.tool_calls.extend((c["id"], c["name"]) for _, c in sorted(state.calls.items()))
            if state.finish:
                result.finish_reasons.append(state.finish)
            result.output_messages.append(message)
        return result
