"""``responses.create``: request, response, stream events and semconv message parts."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.jsonable import jsonable, jsonable_list
from otel_agent_trace.instrumentation._genai.model_call import ModelResult
from otel_agent_trace.instrumentation._genai.params import (
    model_of,
    request_params,
    stream_flag,
)
from otel_agent_trace.session_format.messages import openai_responses_to_semconv as to_semconv

PROVIDER = "openai"
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def raw_response_types() -> tuple[type, ...]:
    """The client's raw responses: ``with_streaming_response`` hands back an ``APIResponse`` /
    ``AsyncAPIResponse`` (the OpenAI Agents SDK streams through it), ``with_raw_response`` a
    ``LegacyAPIResponse`` (LangChain's ``ChatOpenAI`` calls through it)."""
    import openai

    types: list[type] = [openai.APIResponse, openai.AsyncAPIResponse]
    try:
        from openai._legacy_response import LegacyAPIResponse
    except ImportError:  # a future client without it
        pass
    else:
        types.append(LegacyAPIResponse)
    return tuple(types)


def _usage(result: ModelResult, usage: Any) -> None:
    if usage is None:
        return
    result.input_tokens = getattr(usage, "input_tokens", None)
    result.output_tokens = getattr(usage, "output_tokens", None)
    details = getattr(usage, "input_tokens_details", None)
    if details is not None and getattr(details, "cached_tokens", None) is not None:
        result.cache_read_tokens = details.cached_tokens
    details = getattr(usage, "output_tokens_details", None)
    if details is not None and getattr(details, "reasoning_tokens", None) is not None:
        result.reasoning_tokens = details.reasoning_tokens


def read_response(response: Any, content: bool = True) -> ModelResult:
    result = ModelResult()
    if getattr(response, "output", None) is None:
        return result
    result.response_model = getattr(response, "model", None)
    result.response_id = getattr(response, "id", None)
    _usage(result, getattr(response, "usage", None))
    if content:
        result.output_messages = [jsonable(item) for item in response.output]
    for item in response.output:
        if getattr(item, "type", None) == "function_call":
            result.tool_calls.append((getattr(item, "call_id", None), getattr(item, "name", None)))
    status = getattr(response, "status", None)
    if result.tool_calls:
        result.finish_reasons = ["tool_calls"]
    elif status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        result.finish_reasons = [getattr(details, "reason", None) or "incomplete"]
    elif status == "completed":
        result.finish_reasons = ["stop"]
    elif status:
        result.finish_reasons = [status]
    return result


class ResponsesSpec(CallSpec):
    provider = PROVIDER
    operation = semconv.OP_CHAT
    to_semconv = staticmethod(to_semconv)

    def __init__(self, stream_types: tuple[type, ...], raw_types: tuple[type, ...] | None = None):
        self.stream_types = stream_types
        self.raw_types = raw_response_types() if raw_types is None else raw_types

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        return model_of(kwargs), request_params(kwargs), stream_flag(kwargs)

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        raw = kwargs.get("input")
        if isinstance(raw, str):
            messages: list[Any] = [{"role": "user", "content": raw}]
        elif isinstance(raw, (list, tuple)):
            messages = jsonable_list(raw)
        else:
            messages = []
        instructions = kwargs.get("instructions")
        system = instructions if isinstance(instructions, str) else None
        tools = kwargs.get("tools")
        tools = jsonable(tools) if isinstance(tools, (list, tuple)) else None
        return messages, system, tools

    def is_stream(self, response: Any) -> bool:
        return isinstance(response, self.stream_types)

    def result(self, response: Any, content: bool = True) -> ModelResult:
        return read_response(response, content)

    def accumulator(self) -> EventAccumulator:
        return EventAccumulator()


class EventAccumulator:
    """Builds the result of a streamed response from its events (the final event carries it all;
    before it, the finished output items and text deltas are kept)."""

    def __init__(self) -> None:
        self.final: Any = None
        self.id: str | None = None
        self.model: str | None = None
        self.items: dict[int, Any] = {}
        self.text: dict[int, list[str]] = {}

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind in _FINAL_EVENTS:
            self.final = event.response
        elif kind == "response.created":
            self.id = getattr(event.response, "id", None)
            self.model = getattr(event.response, "model", None)
        elif kind == "response.output_item.done":
            self.items[event.output_index] = event.item
        elif kind == "response.output_text.delta":
            self.text.setdefault(event.output_index, []).append(event.delta)

    def result(self) -> ModelResult:
        if self.final is not None:
            return read_response(self.final)
        result = ModelResult()
        result.response_id = self.id
        result.response_model = self.model
        for index in sorted(set(self.items) | set(self.text)):
            item = self.items.get(index)
            if item is not None:
                result.output_messages.append(jsonable(item))
                if getattr(item, "type", None) == "function_call":
                    result.tool_calls.append((getattr(item, "call_id", None), getattr(item, "name", None)))
            else:
                text = "".join(self.text[index])
                result.output_messages.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    }
                )
        return result
