"""``agent_trace_crewai``: for CrewAI, an ``invoke_workflow {crew name}`` span per
``Crew.kickoff`` (so a crew's agents are one trace), an ``invoke_agent {role}`` span per task an
agent executes (``Agent.execute_task``) and per standalone ``Agent.kickoff``, and an
``execute_tool {name}`` span per tool call: a native one with the model's call id, one the model
wrote as ReAct text (``Action:`` / ``Action Input:``, run by ``ToolUsage.use`` / ``ause``)
without one; the arguments and the result on each. CrewAI's own telemetry (its own tracer
provider, sent to CrewAI unless disabled) is not ours and is left alone. Model calls are the
client's underneath (CrewAI's native OpenAI provider → ``openai``), recorded by that
instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_AGENT = "crewai.agent.core"
_TOOL_CALLS = ("crewai.utilities.agent_utils", "crewai.agents.step_executor")  # imported by name


class CrewAIInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "crewai"
    _patches = Patches("agent_trace_crewai")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        wrap = self._patches.wrap
        wrap("crewai.crew", "Crew.kickoff", wrappers.crew_wrapper(tracer))
        wrap("crewai.crew", "Crew.akickoff", wrappers.async_crew_wrapper(tracer))
        wrap(_AGENT, "Agent.execute_task", wrappers.task_wrapper(tracer))
        wrap(_AGENT, "Agent.aexecute_task", wrappers.async_task_wrapper(tracer))
        wrap(_AGENT, "Agent.kickoff", wrappers.kickoff_wrapper(tracer))
        wrap(_AGENT, "Agent.kickoff_async", wrappers.async_kickoff_wrapper(tracer))
        wrap(
            "crewai.agents.agent_executor",
            "AgentExecutor._execute_single_native_tool_call",
            wrappers.method_tool_call_wrapper(tracer),
        )
        for module in _TOOL_CALLS:
            wrap(module, "execute_single_native_tool_call", wrappers.function_tool_call_wrapper(tracer))
        wrap("crewai.tools.tool_usage", "ToolUsage.use", wrappers.text_tool_wrapper(tracer))
        wrap("crewai.tools.tool_usage", "ToolUsage.ause", wrappers.async_text_tool_wrapper(tracer))


__all__ = ["CrewAIInstrumentor"]
