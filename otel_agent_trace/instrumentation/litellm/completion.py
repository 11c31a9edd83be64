"""``completion`` / ``acompletion``: OpenAI's chat shape in and out (LiteLLM's ``ModelResponse``
and its stream's chunks are OpenAI's), so the OpenAI chat reader reads them; the provider is
LiteLLM's (``openai/gpt-4o-mini`` → ``openai``, model ``gpt-4o-mini``), in the semantic
conventions' names where they have one."""

from __future__ import annotations

import functools
from typing import Any

from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, begin
from otel_agent_trace.instrumentation._genai.streams import AsyncStreamProxy, StreamProxy
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.openai import chat as openai_chat

# LiteLLM's provider names → gen_ai.provider.name (others are kept as LiteLLM says them)
PROVIDERS = {
    "openai": "openai",
    "text-completion-openai": "openai",
    "azure": "azure.ai.openai",
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "vertex_ai": "gcp.vertex_ai",
    "vertex_ai_beta": "gcp.vertex_ai",
    "gemini": "gcp.gemini",
    "mistral": "mistral_ai",
    "ollama": "ollama",
    "ollama_chat": "ollama",
    "groq": "groq",
    "cohere": "cohere",
    "cohere_chat": "cohere",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "perplexity": "perplexity",
    "watsonx": "ibm.watsonx.ai",
}
_POSITIONAL = ("model", "messages")


def _named(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    if not args:
        return kwargs
    return {**dict(zip(_POSITIONAL, args[:2], strict=False)), **kwargs}


def _provider(kwargs: dict[str, Any]) -> tuple[str | None, str]:
    """(the model as the provider knows it, the provider)."""
    model = kwargs.get("model")
    if not isinstance(model, str):
        return None, "litellm"
    custom, base = kwargs.get("custom_llm_provider"), kwargs.get("api_base")
    try:
        if isinstance(custom, str | None) and isinstance(base, str | None):
            return _placed(model, custom, base)
        return _placed.__wrapped__(model, custom, base)
    except Exception:  # a model LiteLLM cannot place: it raises so itself, in the call
        return model, "litellm"


@functools.lru_cache(maxsize=256)
def _placed(model: str, custom: Any, base: Any) -> tuple[str, str]:
    """LiteLLM's placing of a model (``get_llm_provider``: some 30 calls of its own), kept for
    the next call with the same model, provider and ``api_base`` (a program sets what else it
    reads, its environment and registered providers, before its calls). Not kept when LiteLLM
    cannot place the model."""
    import litellm

    resolved, provider, _key, _base = litellm.get_llm_provider(model, custom, base)
    return resolved or model, PROVIDERS.get(provider, provider or "litellm")


class CompletionSpec(openai_chat.ChatSpec):
    def __init__(self) -> None:
        super().__init__((), raw_types=())

    def begin(self, kwargs: dict[str, Any], patches: Patches | None = None) -> ModelCall | None:
        try:
            model, provider = _provider(kwargs)
            _ignored, params, stream = self.request(kwargs)
            tracer = patches.tracer() if patches is not None else None
            call = begin(provider, self.operation, model, params, stream=stream, tracer=tracer)
            if call is not None and call.wants_content:
                messages, system, tools = self.input(kwargs)
                call.set_input(messages, system, tools, type(self).to_semconv)
            return call
        except Exception as exc:
            from otel_agent_trace._internal.guard import internal_error

            internal_error("starting a litellm call", exc)
            return None

    def is_stream(self, response: Any) -> bool:
        from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

        return isinstance(response, CustomStreamWrapper)

    def finish(self, call: ModelCall, response: Any, *, is_async: bool) -> Any:
        if is_async and self.is_stream(response):
            return AsyncStream(response, call, self.accumulator())
        return super().finish(call, response, is_async=is_async)


class AsyncStream(AsyncStreamProxy):
    """``acompletion(stream=True)``'s ``CustomStreamWrapper``: its ``close`` is not a coroutine
    (so it is a plain stream's), and ``aclose`` ends the span too."""

    def close(self) -> Any:
        return StreamProxy.close(self)  # type: ignore[arg-type]

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_end()


def sync_completion(spec: CallSpec, patches: Patches) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        if kwargs.get("acompletion") is True:  # returns a coroutine: left to what it calls
            return wrapped(*args, **kwargs)
        call = spec.begin(_named(args, kwargs), patches)
        if call is None:
            return wrapped(*args, **kwargs)
        return spec.finish(call, call.call(wrapped, args, kwargs), is_async=False)

    return wrapper


def async_completion(spec: CallSpec, patches: Patches) -> Any:
    async def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(_named(args, kwargs), patches)
        if call is None:
            return await wrapped(*args, **kwargs)
        return spec.finish(call, await call.acall(wrapped, args, kwargs), is_async=True)

    return wrapper
