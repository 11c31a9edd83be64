"""``agent_trace_agno``: for Agno, an ``invoke_agent {name}`` span per ``Agent.run`` /
``Agent.arun`` (plain or ``stream=True``) with its model and tool calls under it, the same per
``Team.run`` / ``Team.arun`` (patched when ``agno.team`` is imported; a member's run under the
leader's ``delegate_task_to_member`` call), and an ``execute_tool {name}`` span per tool call
with the model's call id. Agno emits no OpenTelemetry
spans of its own (its ``setup_tracing`` installs OpenInference's instrumentor, not part of it).
Model calls are the client's underneath (``OpenAIChat`` → ``openai``), recorded by that
instrumentation."""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import Any

import wrapt

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_AGENT = "agno.agent.agent"
_FUNCTION = "agno.tools.function"
_TEAM = "agno.team.team"


class AgnoInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "agno.agent"  # (the package "agno" alone holds only its version)
    _patches = Patches("agent_trace_agno")
    _team_hooked = False

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
        cls = type(self)
        if _TEAM in sys.modules:
            self._wrap_team(sys.modules[_TEAM])
        elif not cls._team_hooked:
            cls._team_hooked = True  # a post-import hook cannot be removed: it checks _applied instead
            wrapt.register_post_import_hook(self._on_team_import, _TEAM)

    def _on_team_import(self, module: Any) -> None:
        if type(self)._applied:
            self._wrap_team(module)

    def _wrap_team(self, module: Any) -> None:
        from otel_agent_trace._internal.guard import internal_error

        from . import wrappers

        try:
            self._patches.wrap(module, "Team.run", wrappers.run_wrapper(self._patches.tracer))
            self._patches.wrap(module, "Team.arun", wrappers.arun_wrapper(self._patches.tracer))
        except Exception as exc:  # never break the agent's import of agno.team
            internal_error("instrumenting agno.team on import", exc)


__all__ = ["AgnoInstrumentor"]
