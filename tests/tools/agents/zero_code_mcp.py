"""An agent with no tracing code at all whose one tool is an MCP server's, in memory: FastMCP and
a ClientSession on mcp 1.x, MCPServer and the high-level Client on mcp 2.x."""

import asyncio

try:  # mcp 2.x
    from mcp import Client as connect
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.shared.memory import create_connected_server_and_client_session as connect

server = Server("echo")


@server.tool()
def echo(text: str) -> str:
    """Echo a text."""
    return text


async def use_mcp() -> str:
    async with connect(server) as client:
        await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})
        return result.content[0].text


print(asyncio.run(use_mcp()))
