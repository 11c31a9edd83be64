"""``agent_trace_smolagents``: for smolagents, an ``invoke_agent {name}`` span per run
(``agent.run(...)``, streamed or not; a managed agent's run nests under the call that asked it)
with its model and tool calls under it, and an ``execute_tool {name}`` span per tool call: with
the model's call id for a ``ToolCallingAgent``, without one for the tools a ``CodeAgent``'s code
calls (code has no call ids). smolagents emits no OpenTelemetry spans of its own. Model calls are
the client's underneath (``OpenAIModel`` → ``openai``), recorded by that instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_AGENTS = "smolagents.agents"


class SmolagentsInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "smolagents"
    _patches = Patches("agent_trace_smolagents")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        self._patches.wrap(_AGENTS, "MultiStepAgent._run_stream", wrappers.run_stream_wrapper(tracer))
        self._patches.wrap(_AGENTS, "ToolCallingAgent.process_tool_calls", wrappers.process_tool_calls)
        self._patches.wrap(_AGENTS, "ToolCallingAgent.execute_tool_call", wrappers.execute_wrapper(tracer))
        self._patches.wrap("smolagents.tools", "Tool.__call__", wrappers.tool_call_wrapper(tracer))


__all__ = ["SmolagentsInstrumentor"]
