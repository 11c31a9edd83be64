"""``messages.create`` / ``messages.stream``: request, response, stream events, semconv parts."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.jsonable import jsonable, jsonable_list
from otel_agent_trace.instrumentation._genai.model_call import ModelResult
from otel_agent_trace.instrumentation._genai.params import (
    messages_list,
    model_of,
    request_params,
    stream_flag,
)
from otel_agent_trace.session_format.messages import anthropic_to_semconv as to_semconv

PROVIDER = "anthropic"


def _usage(result: ModelResult, usage: Any) -> None:
    """Anthropic's ``input_tokens`` leaves out cached tokens; the semconv count includes them."""
    if usage is None:
        return
    read = getattr(usage, "cache_read_input_tokens", None)
    created = getattr(usage, "cache_creation_input_tokens", None)
    inp = getattr(usage, "input_tokens", None)
    if inp is not None:
        result.input_tokens = inp + (read or 0) + (created or 0)
    result.output_tokens = getattr(usage, "output_tokens", None)
    if read is not None:
        result.cache_read_tokens = read
    if created is not None:
        result.cache_creation_tokens = created


def read_message(message: Any, content_wanted: bool = True) -> ModelResult:
    result = ModelResult()
    content = getattr(message, "content", None)
    if content is None:
        return result
    result.response_model = getattr(message, "model", None)
    result.response_id = getattr(message, "id", None)
    _usage(result, getattr(message, "usage", None))
    if getattr(message, "stop_reason", None):
        result.finish_reasons = [message.stop_reason]
    if content_wanted:
        result.output_messages = [
            {"role": getattr(message, "role", "assistant"), "content": jsonable(content)}
        ]
    for block in content:
        if getattr(block, "type", None) == "tool_use":
            result.tool_calls.append((getattr(block, "id", None), getattr(block, "name", None)))
    return result


def raw_response_types() -> tuple[type, ...]:
    """The client's raw responses (``with_raw_response`` / ``with_streaming_response``): their
    ``parse()`` gives the message or the stream that ``create`` would have returned."""
    import anthropic

    return tuple(
        t
        for t in (getattr(anthropic, "APIResponse", None), getattr(anthropic, "AsyncAPIResponse", None))
        if t
    )


class MessagesSpec(CallSpec):
    provider = PROVIDER
    operation = semconv.OP_CHAT
    to_semconv = staticmethod(to_semconv)

    def __init__(self, stream_types: tuple[type, ...]):
        self.stream_types = stream_types
        self.raw_types = raw_response_types()

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        return model_of(kwargs), request_params(kwargs), stream_flag(kwargs)

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        messages = jsonable_list(messages_list(kwargs.get("messages")) or [])
        system = kwargs.get("system")
        system = jsonable(system) if isinstance(system, (str, list, tuple)) else None
        tools = kwargs.get("tools")
        tools = jsonable(tools) if isinstance(tools, (list, tuple)) else None
        return messages, system, tools

    def is_stream(self, response: Any) -> bool:
        return isinstance(response, self.stream_types)

    def result(self, response: Any, content: bool = True) -> ModelResult:
        return read_message(response, content)

    def accumulator(self) -> EventAccumulator:
        return EventAccumulator()


class EventAccumulator:
    """Builds the message of a stream from its raw events (``message_start``,
    ``content_block_*``, ``message_delta``); other event types are ignored."""

    def __init__(self) -> None:
        self.message: Any = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, list[str]] = {}
        self.stop_reason: str | None = None
        self.output_tokens: int | None = None

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self.message = event.message
        elif kind == "content_block_start":
            self.blocks[event.index] = jsonable(event.content_block)
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(event.index, {"type": "text", "text": ""})
            delta = event.delta
            dtype = getattr(delta, "type", None)
            if dtype == "text_delta":
                block["text"] = (block.get("text") or "") + delta.text
            elif dtype == "input_json_delta":
                self.partial_json.setdefault(event.index, []).append(delta.partial_json)
            elif dtype == "thinking_delta":
                block["thinking"] = (block.get("thinking") or "") + delta.thinking
        elif kind == "message_delta":
            self.stop_reason = getattr(event.delta, "stop_reason", None) or self.stop_reason
            usage = getattr(event, "usage", None)
            if usage is not None and getattr(usage, "output_tokens", None) is not None:
                self.output_tokens = usage.output_tokens

    def result(self) -> ModelResult:
        result = ModelResult()
        msg = self.message
        if msg is not None:
            result.response_model = getattr(msg, "model", None)
            result.response_id = getattr(msg, "id", None)
            _usage(result, getattr(msg, "usage", None))
        if self.output_tokens is not None:
            result.output_tokens = self.output_tokens
        if self.stop_reason:
            result.finish_reasons = [self.stop_reason]
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.get("type") == "tool_use":
                pieces = self.partial_json.get(index)
                if pieces:
                    import json

                    try:
                        block["input"] = json.loads("".join(pieces))
                    except ValueError:
                        block["input"] = "".join(pieces)
                result.tool_calls.append((block.get("id"), block.get("name")))
            content.append(block)
        if msg is not None or content:
            result.output_messages = [{"role": "assistant", "content": content}]
        return result
