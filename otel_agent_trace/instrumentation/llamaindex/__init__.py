"""``agent_trace_llamaindex``: for LlamaIndex agents (``FunctionAgent``, ``ReActAgent``,
``CodeActAgent``, ``AgentWorkflow``), an ``invoke_agent {name}`` span per ``run(...)`` with the
run's model and tool calls under it, and an ``execute_tool {name}`` span per tool call with the
model's call id, the arguments and the result. LlamaIndex's own instrumentation (its dispatcher)
is not OpenTelemetry and is left alone. Model calls are the client's underneath
(``llama_index.llms.openai.OpenAI`` → ``openai``), recorded by that instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_BASE = "llama_index.core.agent.workflow.base_agent"
_MULTI = "llama_index.core.agent.workflow.multi_agent_workflow"


class LlamaIndexInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "llama_index.core"
    _patches = Patches("agent_trace_llamaindex")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        self._patches.wrap(_BASE, "BaseWorkflowAgent.run", wrappers.run_wrapper(tracer))
        self._patches.wrap(_MULTI, "AgentWorkflow.run", wrappers.run_wrapper(tracer))
        self._patches.wrap(_BASE, "BaseWorkflowAgent.call_tool", wrappers.call_tool_wrapper(tracer))
        self._patches.wrap(_MULTI, "AgentWorkflow.call_tool", wrappers.call_tool_wrapper(tracer))
        self._patches.wrap(_BASE, "BaseWorkflowAgent.run_agent_step", wrappers.model_step)
        self._patches.wrap(_MULTI, "AgentWorkflow.run_agent_step", wrappers.model_step)


__all__ = ["LlamaIndexInstrumentor"]
