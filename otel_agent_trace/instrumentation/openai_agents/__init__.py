"""``agent_trace_openai_agents``: for the OpenAI Agents SDK, an ``invoke_agent {name}`` span per
run (``Runner.run`` / ``run_sync`` / ``run_streamed``; a handoff nests the next agent's span) with
the run's model and tool calls under it, and an ``execute_tool`` span for every function tool
call, with the model's call id, the arguments and the result."""

from __future__ import annotations

import importlib
from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

# The function is defined in agents.tool and imported by name into the runner's module.
_MODULES = ("agents.tool", "agents.run_internal.tool_execution", "agents._run_impl")
_RUNNER = "agents.run"
# The loop's turn functions, defined in run_loop and imported by name into the runner's module.
_TURN_MODULES = ("agents.run_internal.run_loop", "agents.run")
_TURNS = ("run_single_turn", "run_single_turn_streamed")


def _owners() -> list[Any]:
    from .wrappers import FUNCTION

    owners = []
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # not in this version of the SDK
            continue
        if hasattr(module, FUNCTION):
            owners.append(module)
    return owners


class OpenAIAgentsInstrumentor(DeferredInstrumentor):
    library_module = "agents"
    _patches = Patches("agent_trace_openai_agents")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from .runs import run_streamed_wrapper, run_wrapper, turn_wrapper
        from .wrappers import FAILURE_HANDLER, FUNCTION, failure_handler_wrapper, invoke_wrapper, use

        use(self._patches)

        for module in _owners():
            self._patches.wrap(module, FUNCTION, invoke_wrapper)
            self._patches.wrap(module, FAILURE_HANDLER, failure_handler_wrapper)  # absent: skipped
        tracer = self._patches.tracer
        self._patches.wrap(_RUNNER, "AgentRunner.run", run_wrapper(tracer))  # run_sync runs it too
        self._patches.wrap(_RUNNER, "AgentRunner.run_streamed", run_streamed_wrapper(tracer))
        for name in _TURN_MODULES:
            for turn in _TURNS:
                self._patches.wrap(name, turn, turn_wrapper(tracer))  # absent: skipped


__all__ = ["OpenAIAgentsInstrumentor"]
