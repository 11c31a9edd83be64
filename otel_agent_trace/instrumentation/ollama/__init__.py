"""Ollama's Python client (``ollama``): ``chat``, ``generate`` and ``embed`` of ``Client`` and
``AsyncClient`` (and the module-level ``ollama.chat`` …, bound to a default client when ``ollama``
is imported), plain, streamed (``stream=True``) and with tools.

``opentelemetry-instrument`` loads this as ``agent_trace_ollama``; by hand::

    OllamaInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class OllamaInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Ollama client (``gen_ai.provider.name = ollama``)."""

    library_module = "ollama"

    _patches = Patches("agent_trace_ollama", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.ollama.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.ollama.chat import ChatSpec, async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.ollama.generate import EmbedSpec, GenerateSpec

        patches = self._patches
        for spec in (ChatSpec(), GenerateSpec(), EmbedSpec()):
            method, names = spec.operation_method, spec.positional
            patches.wrap("ollama._client", f"Client.{method}", sync_wrapper(spec, names, patches))
            patches.wrap("ollama._client", f"AsyncClient.{method}", async_wrapper(spec, names, patches))
            patches.wrap("ollama", method, sync_wrapper(spec, names, patches))  # bound at import

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
