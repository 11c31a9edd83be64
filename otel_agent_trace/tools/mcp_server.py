"""``session_recorder`` as an MCP server (``otel-agent-trace mcp``, stdio).

The server records in its own process: started by an agent run under the plug-in, it inherits
the agent's session and joins it (its snapshots land in that session's tree); started on its
own, ``start`` records a session of its own. ``status`` and ``list`` read the sessions directory
either way.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace._version import __version__

from . import recorder

try:  # mcp 2.x: FastMCP is MCPServer (mcp.server.fastmcp only raises), and takes a version
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    MCPServer = None
    from mcp.server.fastmcp import FastMCP


def build_server(name: str = "otel-agent-trace") -> Any:
    """The server: ``FastMCP`` on mcp 1.x, ``MCPServer`` on 2.x."""
    if MCPServer is not None:
        server = MCPServer(name, instructions=recorder.DESCRIPTION, version=__version__)
    else:
        server = FastMCP(name, instructions=recorder.DESCRIPTION)
        # The version a client sees (serverInfo.version) is ours, not the MCP SDK's: FastMCP
        # takes none, its low-level server does (a private attribute, checked by the test of
        # this server).
        lowlevel = getattr(server, "_mcp_server", None)
        if lowlevel is not None and hasattr(lowlevel, "version"):
            lowlevel.version = __version__

    @server.tool(name="session_recorder", description=recorder.DESCRIPTION)
    def session_recorder(
        action: str,
        description: str | None = None,
        name: str | None = None,
        filename: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return recorder.session_recorder(action, description, name, filename, limit)

    return server


def run_stdio() -> None:
    build_server().run("stdio")
