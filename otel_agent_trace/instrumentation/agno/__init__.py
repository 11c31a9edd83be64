"""``agent_trace_agno``: for Agno, an ``invoke_agent {name}`` span per ``Agent.run`` /
``Agent.arun`` (plain or ``stream=True``) with its model and tool calls under it, and an
``execute_tool {name}`` span per tool call with the model's call id. Agno emits no OpenTelemetry
spans of its own (its ``setup_tracing`` installs OpenInference's instrumentor, not part of it).
Model calls are the client's underneath (``OpenAIChat`` → ``openai``), recorded by that
instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_AGENT = "agno.agent.agent"
_FUNCTION = "agno.tools.function"


class AgnoInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "agno.agent"  # (the package "agno" alone holds only its version)
    _patches = Patches("agent_trace_agno")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        self._patches.wrap(_AGENT, "Agent.run", wrappers.run_wrapper(tracer))
        self._patches.wrap(_AGENT, "Agent.arun", wrappers.arun_wrapper(tracer))
        self._patches.wrap(_FUNCTION, "FunctionCall.execute", wrappers.execute_wrapper(tracer))
        self._patches.wrap(_FUNCTION, "FunctionCall.aexecute", wrappers.aexecute_wrapper(tracer))


__all__ = ["AgnoInstrumentor"]
