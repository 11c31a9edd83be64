"""``agent_trace_autogen``: AutoGen (``autogen-agentchat``) emits its own GenAI spans
(``invoke_agent {name}`` per ``run`` / ``run_stream``, ``execute_tool {name}`` with the model's
call id, ``create_agent {name}``); we add to them and make none of our own where they exist:
the run's input, output, provider and model on the agent span, the tool's arguments and result
on the tool span. An ``AssistantAgent`` driven without AutoGen's agent span (``on_messages``
called directly) gets an ``invoke_agent`` span of ours. A team's run (``RoundRobinGroupChat``,
``SelectorGroupChat``, ``Swarm``, ``GraphFlow``, ``MagenticOneGroupChat``: all through
``BaseGroupChat.run_stream``), for which AutoGen makes no span, gets an
``invoke_workflow {team name}`` span of ours that its runtime's message spans, and so every agent
turn, sit under: one trace per team run. Model calls are the client's underneath
(``OpenAIChatCompletionClient`` → ``openai``), recorded by that instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class AutoGenInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "autogen_agentchat"
    _patches = Patches("agent_trace_autogen")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        tracer = self._patches.tracer
        self._patches.wrap(
            "autogen_agentchat.agents._assistant_agent",
            "AssistantAgent.on_messages_stream",
            wrappers.messages_stream_wrapper(tracer),
        )
        self._patches.wrap(
            "autogen_core.tools._function_tool", "FunctionTool.run", wrappers.tool_run_wrapper(tracer)
        )
        self._patches.wrap(
            "autogen_agentchat.teams._group_chat._base_group_chat",
            "BaseGroupChat.run_stream",
            wrappers.team_stream_wrapper(tracer),
        )


__all__ = ["AutoGenInstrumentor"]
