"""``chat.completions.create``: Groq's client is a Stainless client like openai's and its chat
completions are OpenAI's in shape (``choices``, ``message``, ``tool_calls`` with ids,
``finish_reason``, ``usage.prompt_tokens``), so the OpenAI chat reader reads them. A stream
reports its usage in the last chunk's ``x_groq.usage``, and a reasoning model's deltas may carry
``reasoning`` text, assembled as the message's ``reasoning`` (as a whole response gives it)."""

from __future__ import annotations

from typing import Any

from otel_agent_trace.instrumentation._genai.model_call import ModelResult
from otel_agent_trace.instrumentation.openai import chat as openai_chat

PROVIDER = "groq"


class ChatSpec(openai_chat.ChatSpec):
    provider = PROVIDER

    def __init__(self) -> None:
        import groq

        # ``with_raw_response`` and ``with_streaming_response`` both hand back an ``APIResponse``
        super().__init__((groq.Stream, groq.AsyncStream), raw_types=(groq.APIResponse, groq.AsyncAPIResponse))

    def accumulator(self) -> Accumulator:
        return Accumulator()


class Accumulator(openai_chat.ChunkAccumulator):
    """The OpenAI chunk accumulator, with the usage of ``x_groq`` and the reasoning text."""

    def __init__(self) -> None:
        super().__init__()
        self.reasoning: dict[int, list[str]] = {}

    def observe(self, chunk: Any) -> None:
        super().observe(chunk)
        if self.usage is None:
            usage = getattr(getattr(chunk, "x_groq", None), "usage", None)
            if usage is not None:
                self.usage = usage
        for ch in getattr(chunk, "choices", None) or ():
            reasoning = getattr(ch.delta, "reasoning", None)
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.setdefault(ch.index, []).append(reasoning)

    def result(self) -> ModelResult:
        result = super().result()
        if self.reasoning:
            for index, message in zip(sorted(self.choices), result.output_messages, strict=True):
                if index in self.reasoning:
                    message["reasoning"] = "".join(self.reasoning[index])
        return result
