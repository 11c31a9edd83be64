"""``agent_trace_autogen``: AutoGen (``autogen-agentchat``) emits its own GenAI spans
(``invoke_agent {name}`` per ``run`` / ``run_stream``, ``execute_tool {name}`` with the model's
call id, ``create_agent {name}``); we add to them and make none of our own where they exist:
the run's input, output, provider and model on the agent span, the tool's arguments and result
on the tool span. An ``AssistantAgent`` driven without AutoGen's agent span (``on_messages``
called directly) gets an ``invoke_agent`` span of ours. Model calls are the client's underneath
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


__all__ = ["AutoGenInstrumentor"]
