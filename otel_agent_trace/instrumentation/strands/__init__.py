"""Strands Agents: its own spans (``invoke_agent``, ``chat``, ``execute_tool``, cycles) are kept
as they are; we add what they lack for a session, through its tracer.

* ``chat`` spans: the full input/output messages and system prompt (``attach_content``), a
  snapshot per model turn, the tool calls asked for (``agent_trace.tool_calls.*`` + events),
  ``gen_ai.response.finish_reasons`` and, when Strands does not set it, the real
  ``gen_ai.provider.name`` (from the SDK call underneath). The SDK call underneath (OpenAI,
  Anthropic) makes no span of its own: the ``chat`` span is *claimed*.
* ``invoke_agent`` spans: the agent's input and result, and at the end of each agent turn its
  whole conversation (``agent.messages``) plus a snapshot of it.

Strands emits through the global tracer provider, so its spans reach our processor as they are.
``opentelemetry-instrument`` loads this as ``agent_trace_strands``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_TRACER = "strands.telemetry.tracer"


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
        self._patches.wrap(_TRACER, "Tracer.end_model_invoke_span", hooks.end_model)
        self._patches.wrap(_TRACER, "Tracer.end_span_with_error", hooks.end_with_error)
        self._patches.wrap(_TRACER, "Tracer.start_agent_span", hooks.start_agent)
        self._patches.wrap(_TRACER, "Tracer.end_agent_span", hooks.end_agent)
        self._patches.wrap("strands.agent.agent", "Agent._end_agent_trace_span", hooks.end_turn)
