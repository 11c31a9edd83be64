"""``agent_trace_openai_agents``: an ``execute_tool`` span for every OpenAI Agents SDK function
tool call, with the model's call id, the arguments and the result."""

from __future__ import annotations

import importlib
from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

# The function is defined in agents.tool and imported by name into the runner's module.
_MODULES = ("agents.tool", "agents.run_internal.tool_execution", "agents._run_impl")


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
        from .wrappers import FAILURE_HANDLER, FUNCTION, failure_handler_wrapper, invoke_wrapper

        for module in _owners():
            self._patches.wrap(module, FUNCTION, invoke_wrapper)
            self._patches.wrap(module, FAILURE_HANDLER, failure_handler_wrapper)  # absent: skipped


__all__ = ["OpenAIAgentsInstrumentor"]
