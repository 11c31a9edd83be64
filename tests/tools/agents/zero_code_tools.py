"""An agent with no tracing code at all: a LangChain tool called with a model's tool call, and an
MCP tool over the in-memory transport, from a worker thread."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from langchain_core.tools import tool
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


server = FastMCP("echo")


@server.tool()
def echo(text: str) -> str:
    """Echo a text."""
    return text


async def use_mcp() -> str:
    async with create_connected_server_and_client_session(server) as client:
        await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})
        return result.content[0].text


with ThreadPoolExecutor(1) as pool:
    call = {"name": "lookup", "args": {"city": "Oslo"}, "id": "call_weather", "type": "tool_call"}
    print(pool.submit(lookup.invoke, call).result().content)
print(asyncio.run(use_mcp()))
