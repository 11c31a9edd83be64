"""``generate`` (a completion: ``text_completion {model}``) and ``embed`` (``embeddings
{model}``), plain and, for ``generate``, streamed (``stream=True``: ``GenerateResponse`` pieces,
the last one, ``done``, with ``done_reason`` and the token counts).

A completion's prompt is the call's one user message (``system`` its system prompt) and its
``response`` (and ``thinking``) the answer, in the session with a snapshot as a chat's. An
embedding call records no messages: its span says the model, the input token count and the
dimension of the vectors (``gen_ai.embeddings.dimension.count``)."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.ollama.chat import PROVIDER, StreamingSpec, _facts

EMBEDDINGS_DIMENSION = "gen_ai.embeddings.dimension.count"


class GenerateSpec(StreamingSpec):
    """``generate(model, prompt, suffix, *, system, stream, options, …)``."""

    operation = semconv.OP_TEXT_COMPLETION
    operation_method = "generate"
    positional = ("model", "prompt", "suffix")

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        system = kwargs.get("system")
        system = system if isinstance(system, str) and system else None
        prompt = kwargs.get("prompt")
        messages: list[Any] = []
        if system is not None:
            messages.append({"role": "system", "content": system})
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        return messages, system, None

    def result(self, response: Any, content: bool = True) -> ModelResult:
        acc = Completion()
        acc.observe(response)
        return acc.result()

    def accumulator(self) -> Completion:
        return Completion()


class Completion:
    """The answer of a ``generate`` response, or of a stream of them, and the last one's facts."""

    def __init__(self) -> None:
        self.last: Any = None
        self.text: list[str] = []
        self.thinking: list[str] = []

    def observe(self, item: Any) -> None:
        self.last = item
        if getattr(item, "response", None):
            self.text.append(item.response)
        if getattr(item, "thinking", None):
            self.thinking.append(item.thinking)

    def result(self) -> ModelResult:
        if self.last is None:
            return ModelResult()
        result = _facts(self.last)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        result.output_messages = [message]
        return result


class EmbedSpec(CallSpec):
    """``embed(model, input, truncate, options, keep_alive, dimensions)``: no messages."""

    provider = PROVIDER
    operation = semconv.OP_EMBEDDINGS
    operation_method = "embed"
    positional = ("model", "input")

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        model = kwargs.get("model")
        return (model or None) if isinstance(model, str) else None, {}, False

    def begin(self, kwargs: dict[str, Any], patches: Patches | None = None) -> ModelCall | None:
        try:
            model, _, _ = self.request(kwargs)
            tracer = patches.tracer() if patches is not None else None
            call = mc.begin(self.provider, self.operation, model, tracer=tracer)
        except Exception as exc:
            internal_error("starting an embeddings call", exc)
            return None
        if call is not None:
            call.snapshot = False  # not a turn of a conversation (and no messages: no content)
        return call

    def is_stream(self, response: Any) -> bool:
        return False

    def result(self, response: Any, content: bool = True) -> ModelResult:
        result = ModelResult()
        result.response_model = getattr(response, "model", None)
        result.input_tokens = getattr(response, "prompt_eval_count", None)
        return result

    def finish(self, call: ModelCall, response: Any, *, is_async: bool) -> Any:
        try:
            vectors = getattr(response, "embeddings", None)
            if call.mode == "own" and vectors and isinstance(vectors[0], (list, tuple)):
                call.span.set_attribute(EMBEDDINGS_DIMENSION, len(vectors[0]))
        except Exception as exc:
            internal_error("reading an embeddings response", exc)
        return super().finish(call, response, is_async=is_async)
