"""``agent_trace_mcp``: an ``execute_tool`` span for every MCP ``ClientSession.call_tool``, and a
``mcp.tools.list`` event (the tool names a server offered) where ``list_tools`` was called."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


def _session_class() -> Any:
    try:
        from mcp.client.session import ClientSession
    except ImportError:
        return None
    return ClientSession


class MCPInstrumentor(DeferredInstrumentor):
    library_module = "mcp"
    _patches = Patches("agent_trace_mcp")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from .wrappers import call_tool_wrapper, list_tools_wrapper

        cls = _session_class()
        if cls is not None:
            self._patches.wrap(cls, "call_tool", call_tool_wrapper)
            self._patches.wrap(cls, "list_tools", list_tools_wrapper)


__all__ = ["MCPInstrumentor"]
