"""``chat`` / ``chat_stream`` of Cohere's v2 client. The request is OpenAI's chat in shape
(``messages`` with ``role`` and ``content``, a text or a list of text parts; an assistant's
``tool_calls`` with ids and ``function``; ``tool`` messages with ``tool_call_id``; ``tools`` as
``{"type": "function", "function": {...}}``), so the OpenAI chat reader reads it, with Cohere's
``k`` / ``p`` for top-k / top-p. The answer is Cohere's own: one ``message`` (``content`` parts,
``tool_plan``, ``tool_calls``), a ``finish_reason`` such as ``COMPLETE`` or ``TOOL_CALL``, and
``usage`` in ``tokens`` (those the model used; ``billed_units`` when absent). A stream is typed
events (``message-start``, ``content-delta``, ``tool-call-start``/``-delta``, ``message-end``…),
sent when the generator is first read."""

from __future__ import annotations

import inspect
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.jsonable import is_given, jsonable
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult
from otel_agent_trace.instrumentation._genai.params import model_of, request_params
from otel_agent_trace.instrumentation._genai.streams import AsyncLazyStreamProxy, LazyStreamProxy
from otel_agent_trace.instrumentation.openai import chat as openai_chat

PROVIDER = "cohere"
_SAMPLING = (("k", semconv.GEN_AI_REQUEST_TOP_K), ("p", semconv.GEN_AI_REQUEST_TOP_P))


class ChatSpec(openai_chat.ChatSpec):
    provider = PROVIDER

    def __init__(self, stream: bool):
        super().__init__((), raw_types=())
        self.stream = stream

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        attrs = request_params(kwargs)
        for key, attr in _SAMPLING:
            value = kwargs.get(key)
            if is_given(value) and isinstance(value, (int, float)) and not isinstance(value, bool):
                attrs[attr] = value
        return model_of(kwargs), attrs, self.stream

    def is_stream(self, response: Any) -> bool:
        return inspect.isgenerator(response) or inspect.isasyncgen(response)

    def finish(self, call: ModelCall, response: Any, *, is_async: bool) -> Any:
        if inspect.isgenerator(response):
            return LazyStreamProxy(response, call, self.accumulator())
        if inspect.isasyncgen(response):
            return AsyncLazyStreamProxy(response, call, self.accumulator())
        return super().finish(call, response, is_async=is_async)

    def result(self, response: Any, content: bool = True) -> ModelResult:
        result = ModelResult()
        message = getattr(response, "message", None)
        if message is None:  # not a chat response
            return result
        result.response_id = getattr(response, "id", None)
        _usage(result, getattr(response, "usage", None))
        finish = getattr(response, "finish_reason", None)
        if isinstance(finish, str) and finish:
            result.finish_reasons.append(finish)
        if content:
            result.output_messages.append(jsonable(message))
        for call in getattr(message, "tool_calls", None) or ():
            fn = getattr(call, "function", None)
            result.tool_calls.append((getattr(call, "id", None), getattr(fn, "name", None)))
        return result

    def accumulator(self) -> Accumulator:
        return Accumulator()


def _count(value: Any) -> int | None:
    """A token count (the SDK types them as floats)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    return None


def _usage(result: ModelResult, usage: Any) -> None:
    if usage is None:
        return
    tokens = getattr(usage, "tokens", None) or getattr(usage, "billed_units", None)
    if tokens is not None:
        result.input_tokens = _count(getattr(tokens, "input_tokens", None))
        result.output_tokens = _count(getattr(tokens, "output_tokens", None))
    cached = _count(getattr(usage, "cached_tokens", None))
    if cached is not None:
        result.cache_read_tokens = cached


class Accumulator:
    """Builds the result of a streamed chat from its events: the message as ``chat`` returns it
    (``role``, ``content`` parts, ``tool_plan``, ``tool_calls``)."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.finish: str | None = None
        self.usage: Any = None
        self.plan: list[str] = []
        self.parts: dict[int, dict[str, Any]] = {}  # content parts by index: type, text pieces
        self.calls: dict[int, dict[str, Any]] = {}  # tool calls by index: id, name, arguments

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        delta = getattr(event, "delta", None)
        message = getattr(delta, "message", None)
        index = getattr(event, "index", None)
        index = index if isinstance(index, int) else 0
        if kind == "message-start":
            self.id = getattr(event, "id", None) or self.id
        elif kind in ("content-start", "content-delta"):
            piece = getattr(message, "content", None)
            part = self.parts.setdefault(index, {"type": None, "pieces": []})
            declared = getattr(piece, "type", None)
            if isinstance(declared, str) and declared:
                part["type"] = declared
            for field in ("text", "thinking"):
                text = getattr(piece, field, None)
                if isinstance(text, str) and text:
                    part["type"] = part["type"] or field
                    part["pieces"].append(text)
        elif kind == "tool-plan-delta":
            text = getattr(message, "tool_plan", None)
            if isinstance(text, str) and text:
                self.plan.append(text)
        elif kind in ("tool-call-start", "tool-call-delta"):
            tool = getattr(message, "tool_calls", None)
            call = self.calls.setdefault(index, {"id": None, "name": None, "arguments": []})
            ident = getattr(tool, "id", None)
            if isinstance(ident, str) and ident:
                call["id"] = ident
            fn = getattr(tool, "function", None)
            name = getattr(fn, "name", None)
            if isinstance(name, str) and name:
                call["name"] = name
            arguments = getattr(fn, "arguments", None)
            if isinstance(arguments, str) and arguments:
                call["arguments"].append(arguments)
        elif kind == "message-end":
            self.id = getattr(event, "id", None) or self.id
            finish = getattr(delta, "finish_reason", None)
            if isinstance(finish, str) and finish:
                self.finish = finish
            usage = getattr(delta, "usage", None)
            if usage is not None:
                self.usage = usage

    def result(self) -> ModelResult:
        result = ModelResult()
        result.response_id = self.id
        _usage(result, self.usage)
        if self.finish:
            result.finish_reasons.append(self.finish)
        message: dict[str, Any] = {"role": "assistant"}
        if self.calls:
            calls = [c for _, c in sorted(self.calls.items())]
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                }
                for c in calls
            ]
            result.tool_calls.extend((c["id"], c["name"]) for c in calls)
        if self.plan:
            message["tool_plan"] = "".join(self.plan)
        if self.parts:
            message["content"] = [
                _part(p["type"] or "text", "".join(p["pieces"])) for _, p in sorted(self.parts.items())
            ]
        result.output_messages.append(message)
        return result


def _part(kind: str, text: str) -> dict[str, Any]:
    """A content part as ``chat`` returns it: ``{"type": "text", "text": …}``, or
    ``{"type": "thinking", "thinking": …}``."""
    return {"type": kind, "thinking" if kind == "thinking" else "text": text}
