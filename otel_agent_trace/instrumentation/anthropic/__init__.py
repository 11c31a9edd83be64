"""Anthropic Python SDK: ``messages.create`` (sync, async, ``stream=True``), ``messages.parse``
and the ``messages.stream(...)`` helper (whose request is made when it is entered); the same for
``beta.messages``.

``opentelemetry-instrument`` loads this as ``agent_trace_anthropic``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class AnthropicInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Anthropic SDK (``gen_ai.provider.name = anthropic``)."""

    library_module = "anthropic"

    _patches = Patches("agent_trace_anthropic", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.anthropic.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        import anthropic

        from otel_agent_trace.instrumentation._genai.calls import async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.anthropic.messages import MessagesSpec
        from otel_agent_trace.instrumentation.anthropic.wrappers import (
            BETA,
            MODULE,
            NATIVE,
            native_span,
            stream_helper,
        )

        spec = MessagesSpec((anthropic.Stream, anthropic.AsyncStream))
        patches = self._patches
        for module in (MODULE, BETA):  # client.messages and client.beta.messages
            patches.wrap(module, "Messages.create", sync_wrapper(spec, patches))
            patches.wrap(module, "AsyncMessages.create", async_wrapper(spec, patches))
            patches.wrap(module, "Messages.parse", sync_wrapper(spec, patches))
            patches.wrap(module, "AsyncMessages.parse", async_wrapper(spec, patches))
            patches.wrap(module, "Messages.stream", stream_helper(spec, False, patches))
            patches.wrap(module, "AsyncMessages.stream", stream_helper(spec, True, patches))
        patches.wrap(*NATIVE, native_span)

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
