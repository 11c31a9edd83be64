"""Mistral's Python SDK (``mistralai`` 3.x, ``from mistralai.client import Mistral``):
``chat.complete``, ``chat.stream`` and their ``_async`` forms, with tools.

Patched when the agent first reaches ``client.chat`` (the SDK imports ``mistralai.client.chat``
then), so an agent that imports ``mistralai`` for other APIs pays nothing.
``opentelemetry-instrument`` loads this as ``agent_trace_mistral``; by hand::

    MistralInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

MODULE = "mistralai.client.chat"


class MistralInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Mistral SDK (``gen_ai.provider.name = mistral_ai``)."""

    library_module = MODULE

    _patches = Patches("agent_trace_mistral", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.mistral.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation._genai.calls import async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.mistral.chat import ChatSpec

        patches, plain, streamed = self._patches, ChatSpec(stream=False), ChatSpec(stream=True)
        patches.wrap(MODULE, "Chat.complete", sync_wrapper(plain, patches))
        patches.wrap(MODULE, "Chat.complete_async", async_wrapper(plain, patches))
        patches.wrap(MODULE, "Chat.stream", sync_wrapper(streamed, patches))
        patches.wrap(MODULE, "Chat.stream_async", async_wrapper(streamed, patches))

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
