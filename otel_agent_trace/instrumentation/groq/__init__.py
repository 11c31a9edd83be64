"""Groq's Python SDK (``groq``, ``from groq import Groq, AsyncGroq``): ``chat.completions.create``,
sync and async, streamed or not, with tools.

Patched when the agent first reaches ``client.chat`` (the SDK imports
``groq.resources.chat.completions`` then), so an agent that imports ``groq`` for other APIs pays
nothing. ``opentelemetry-instrument`` loads this as ``agent_trace_groq``; by hand::

    GroqInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

MODULE = "groq.resources.chat.completions"


class GroqInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Groq SDK (``gen_ai.provider.name = groq``)."""

    library_module = MODULE

    _patches = Patches("agent_trace_groq", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.groq.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation._genai.calls import async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.groq.chat import ChatSpec

        patches, spec = self._patches, ChatSpec()
        patches.wrap(MODULE, "Completions.create", sync_wrapper(spec, patches))
        patches.wrap(MODULE, "AsyncCompletions.create", async_wrapper(spec, patches))

    @property
    def foreign(self) -> list[str]:
        """Methods another instrumentation had wrapped before us (see docs/instrumentation.md)."""
        return list(self._patches.foreign)
