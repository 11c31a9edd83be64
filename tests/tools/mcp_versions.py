"""The one place the MCP tests differ between mcp 1.x and 2.x: how a server is made and how a
client connects to it in memory, and the result fields' names. Both are the real library."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

MCP2 = int(version("mcp").split(".")[0]) >= 2

if MCP2:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer as Server
else:
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.shared.memory import create_connected_server_and_client_session


def make_server(name: str, **kwargs: Any) -> Any:
    """A FastMCP (1.x) or MCPServer (2.x) server."""
    return Server(name, **kwargs)


@asynccontextmanager
async def connected(server: Any) -> AsyncIterator[Any]:
    """A client connected to ``server`` in memory: 1.x's ``ClientSession``; 2.x's ``Client``
    (``.session`` is its ``ClientSession``)."""
    if MCP2:
        async with Client(server) as client:
            yield client
    else:
        async with create_connected_server_and_client_session(server) as session:
            yield session


def session_of(client: Any) -> Any:
    """The bare ``ClientSession`` (what Strands and the OpenAI Agents SDK call)."""
    return client.session if MCP2 else client


def is_error(result: Any) -> bool:
    return bool(result.is_error if MCP2 else result.isError)


def structured(result: Any) -> Any:
    return result.structured_content if MCP2 else result.structuredContent
