"""``agent_trace_mcp``: an ``execute_tool`` span for every MCP tool call, and a ``mcp.tools.list``
event (the tool names a server offered) where the tools were listed.

What is patched depends on the major version of ``mcp``, chosen once when it is imported:

* 1.x: ``ClientSession.call_tool`` and ``list_tools``.
* 2.x: the same, plus the high-level ``Client.call_tool`` and ``list_tools`` (one span over
  its retries; a listing served from its cache), and mcp's own span helper (``otel_span`` where
  ``mcp.shared.jsonrpc_dispatcher`` and ``mcp.server._otel`` use it), so that mcp's
  ``MCP send tools/call`` client span and an in-process server's ``tools/call`` span of a call
  we record are that call's one ``execute_tool`` span, not two more (see ``wrappers.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

# mcp 2.x modules that make mcp's own spans through ``otel_span`` (imported by name there)
_SPAN_MAKERS = ("mcp.shared.jsonrpc_dispatcher", "mcp.server._otel")


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class MCPInstrumentor(DeferredInstrumentor):
    library_module = "mcp"
    _patches = Patches("agent_trace_mcp")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import wrappers

        wrappers.use(self._patches)

        session = _module("mcp.client.session")
        types = _module("mcp.types")
        if session is None or types is None:
            return
        flavour = wrappers.flavour_of(types.CallToolResult)
        cls = session.ClientSession
        self._patches.wrap(cls, "call_tool", wrappers.call_tool_wrapper(flavour))
        self._patches.wrap(cls, "list_tools", wrappers.list_tools_wrapper(client=False))
        if not flavour.v2:
            return
        client = _module("mcp.client.client")
        if client is not None and hasattr(client, "Client"):
            self._patches.wrap(client.Client, "call_tool", wrappers.call_tool_wrapper(flavour, client=True))
            self._patches.wrap(client.Client, "list_tools", wrappers.list_tools_wrapper(client=True))
        for name in _SPAN_MAKERS:
            module = _module(name)
            if module is not None and callable(getattr(module, "otel_span", None)):
                self._patches.wrap(module, "otel_span", wrappers.otel_span_wrapper)


__all__ = ["MCPInstrumentor"]
