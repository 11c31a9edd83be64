"""``agent_trace_google_adk``: Google ADK emits its own GenAI spans (``invoke_workflow``,
``invoke_agent {name}``, ``generate_content {model}``, ``execute_tool {name}`` with the call id);
we add to them and make none of our own: the run's input and final answer on the agent span (an
``LlmAgent``'s; a ``SequentialAgent``'s or ``LoopAgent``'s, whose answer is the last one its
sub-agents gave; a ``ParallelAgent``'s, whose answer is each branch agent's, by name), a
function tool's arguments and result on the tool span. The model call underneath (its
``OpenAILlm`` → ``openai``; ``google-genai`` for Gemini) adopts ADK's ``generate_content`` span:
its messages and snapshot reach the session, no second model span is made."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class GoogleADKInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "google.adk"
    _patches = Patches("agent_trace_google_adk")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        self._patches.wrap("google.adk.agents.llm_agent", "LlmAgent._run_async_impl", wrappers.agent_run)
        # a SequentialAgent's span: the run's input, and the last of its sub-agents' final answers
        self._patches.wrap(
            "google.adk.agents.sequential_agent", "SequentialAgent._run_async_impl", wrappers.agent_run
        )
        # a LoopAgent's alike (the last answer of its last round); a ParallelAgent's: each branch's
        self._patches.wrap("google.adk.agents.loop_agent", "LoopAgent._run_async_impl", wrappers.agent_run)
        self._patches.wrap(
            "google.adk.agents.parallel_agent", "ParallelAgent._run_async_impl", wrappers.parallel_run
        )
        self._patches.wrap(
            "google.adk.tools.function_tool", "FunctionTool.run_async", wrappers.tool_wrapper(tracer)
        )


__all__ = ["GoogleADKInstrumentor"]
