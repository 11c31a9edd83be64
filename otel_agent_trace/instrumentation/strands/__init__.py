"""Strands Agents: its own spans (``invoke_agent``, ``chat``, ``execute_tool``, cycles) are kept;
we add what they lack for a session, through its tracer.

* ``chat`` spans are started as ``chat {model}`` of kind CLIENT, like an SDK's model span
  (``Tracer._start_span``). We add the full input/output messages and system prompt
  (``attach_content``), a snapshot per model turn, the tool calls asked for
  (``agent_trace.tool_calls.*``), the finish reasons in the provider's own words (its
  ``format_chunk`` sees them before Strands maps them), and ``gen_ai.provider.name`` when Strands
  does not set it (from the SDK call underneath, else the Strands model class). The SDK call
  underneath (OpenAI, Anthropic) makes no span of its own: the ``chat`` span is *claimed*.
* ``invoke_agent`` spans: the agent's input and result, and at the end of each agent turn its
  whole conversation (``agent.messages``) plus a snapshot of it.

Strands emits through the global tracer provider, so its spans reach our processor.
``opentelemetry-instrument`` loads this as ``agent_trace_strands``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import wrapt

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_TRACER = "strands.telemetry.tracer"
# Strands' model providers whose ``format_chunk`` gets the provider's stop reason as
# ``{"chunk_type": "message_stop", "data": ...}``; patched when the agent imports them.
_PROVIDER_MODELS = {
    "strands.models.openai": "OpenAIModel",
    "strands.models.litellm": "LiteLLMModel",
    "strands.models.ollama": "OllamaModel",
    "strands.models.mistral": "MistralModel",
    "strands.models.llamaapi": "LlamaAPIModel",
    "strands.models.writer": "WriterModel",
}


class StrandsInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Content and snapshots for the spans Strands Agents emits itself."""

    library_module = "strands"

    _patches = Patches("agent_trace_strands", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.strands.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.strands import hooks

        self._patches.wrap(_TRACER, "Tracer.start_model_invoke_span", hooks.start_model)
        self._patches.wrap(_TRACER, "Tracer._start_span", hooks.start_span)  # absent: name/kind as Strands'
        self._patches.wrap("strands.event_loop.event_loop", "stream_messages", hooks.stream_messages)
        self._patches.wrap(_TRACER, "Tracer.end_model_invoke_span", hooks.end_model)
        self._patches.wrap(_TRACER, "Tracer.end_span_with_error", hooks.end_with_error)
        self._patches.wrap(_TRACER, "Tracer.start_agent_span", hooks.start_agent)
        self._patches.wrap(_TRACER, "Tracer.end_agent_span", hooks.end_agent)
        self._patches.wrap("strands.agent.agent", "Agent._end_agent_trace_span", hooks.end_turn)
        for module, cls in _PROVIDER_MODELS.items():
            wrapt.register_post_import_hook(self._provider_hook(cls), module)  # at once if imported

    def _provider_hook(self, cls: str) -> Any:
        from otel_agent_trace.instrumentation.strands import hooks

        def patch(module: Any) -> None:
            if not type(self)._wanted:  # switched off since: a post-import hook cannot be removed
                return
            try:
                self._patches.wrap(module, f"{cls}.format_chunk", hooks.format_chunk)
            except Exception as exc:  # never break the agent's import of its own library
                internal_error("instrumenting a Strands model provider", exc)

        return patch
