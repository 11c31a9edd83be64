"""``chat.complete`` / ``chat.stream``: Mistral's chat completions are OpenAI's in shape
(``choices``, ``message``, ``tool_calls`` with ids, ``finish_reason``, ``usage.prompt_tokens``),
so the OpenAI chat reader reads them; a stream's items are ``CompletionEvent``s whose ``data``
is the chunk, and a tool call's ``arguments`` may be an object rather than JSON text."""

from __future__ import annotations

import json
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation.openai import chat as openai_chat

PROVIDER = "mistral_ai"


class ChatSpec(openai_chat.ChatSpec):
    provider = PROVIDER

    def __init__(self, stream: bool):
        super().__init__((), raw_types=())
        self.stream = stream

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        model, attrs, _flag = super().request(kwargs)
        seed = kwargs.get("random_seed")
        if isinstance(seed, int) and not isinstance(seed, bool):
            attrs[semconv.GEN_AI_REQUEST_SEED] = seed
        return model, attrs, self.stream

    def is_stream(self, response: Any) -> bool:
        return self.stream

    def accumulator(self) -> Accumulator:
        return Accumulator()


class Accumulator(openai_chat.ChunkAccumulator):
    """The OpenAI chunk accumulator over each event's ``data``; content given as a list of
    chunks is read as their text, and ``arguments`` given as an object as its JSON."""

    def observe(self, chunk: Any) -> None:
        chunk = getattr(chunk, "data", chunk)
        if self.id is None:
            self.id = getattr(chunk, "id", None)
            self.model = getattr(chunk, "model", None)
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = usage
        for ch in getattr(chunk, "choices", None) or ():
            state = self.choices.get(ch.index)
            if state is None:
                state = self.choices[ch.index] = openai_chat._Choice()
            delta = ch.delta
            if delta is not None:
                if isinstance(delta.role, str) and delta.role:
                    state.role = delta.role
                state.text.extend(_texts(delta.content))
                for tc in delta.tool_calls or ():
                    index = tc.index if isinstance(tc.index, int) else len(state.calls)
                    call = state.calls.setdefault(index, {"id": None, "name": None, "arguments": []})
                    if isinstance(tc.id, str) and tc.id:
                        call["id"] = tc.id
                    fn = tc.function
                    if fn is not None:
                        if fn.name:
                            call["name"] = fn.name
                        arguments = fn.arguments
                        if isinstance(arguments, dict):
                            arguments = json.dumps(arguments)
                        if isinstance(arguments, str) and arguments:
                            call["arguments"].append(arguments)
            if isinstance(ch.finish_reason, str) and ch.finish_reason:
                state.finish = ch.finish_reason


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    if isinstance(content, list):  # chunks (text, thinking, …): their text, in order
        return [t for t in (getattr(part, "text", None) for part in content) if isinstance(t, str) and t]
    return []
