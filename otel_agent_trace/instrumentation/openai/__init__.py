"""OpenAI Python SDK: ``chat.completions.create``/``parse`` and ``responses.create``/``parse``,
sync and async, streamed or not (the ``.stream(...)`` helpers call ``create``).

``opentelemetry-instrument`` loads this as ``agent_trace_openai``; by hand::

    OpenAIInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_TARGETS = (
    ("openai.resources.chat.completions", "Completions.create", "chat", False),
    ("openai.resources.chat.completions", "AsyncCompletions.create", "chat", True),
    ("openai.resources.responses", "Responses.create", "responses", False),
    ("openai.resources.responses", "AsyncResponses.create", "responses", True),
    # ``parse`` posts by itself (not through ``create``); its result has the same shape
    ("openai.resources.chat.completions", "Completions.parse", "chat", False),
    ("openai.resources.chat.completions", "AsyncCompletions.parse", "chat", True),
    ("openai.resources.responses", "Responses.parse", "responses", False),
    ("openai.resources.responses", "AsyncResponses.parse", "responses", True),
)


class OpenAIInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the OpenAI SDK (``gen_ai.provider.name = openai``)."""

    library_module = "openai"

    _patches = Patches("agent_trace_openai", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.openai.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        import openai

        from otel_agent_trace.instrumentation._genai.calls import async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.openai.chat import ChatSpec
        from otel_agent_trace.instrumentation.openai.responses import ResponsesSpec

        streams = (openai.Stream, openai.AsyncStream)
        specs = {"chat": ChatSpec(streams), "responses": ResponsesSpec(streams)}
        for module, path, api, is_async in _TARGETS:
            wrapper = (async_wrapper if is_async else sync_wrapper)(specs[api], self._patches)
            self._patches.wrap(module, path, wrapper)

    @property
    def foreign(self) -> list[str]:
        """Methods another instrumentation had wrapped before us (see docs/instrumentation.md)."""
        return list(self._patches.foreign)
