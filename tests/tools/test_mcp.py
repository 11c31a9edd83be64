"""MCP: a real FastMCP server and ClientSession over the in-memory transport. Each call_tool is one
``execute_tool`` span; the tools the server offered are recorded where list_tools ran."""

from __future__ import annotations

import pytest
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

import otel_agent_trace as oat
from tests.context.helpers import by_name, spans_of, tree


def make_server() -> FastMCP:
    server = FastMCP("calc")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(reason)

    return server


async def test_call_tool_spans_under_the_agent_with_the_offered_list(recording):
    async with create_connected_server_and_client_session(make_server()) as client:
        with oat.agent("mcp-agent"):
            listed = await client.list_tools()
            result = await client.call_tool("add", {"a": 2, "b": 5})
            failed = await client.call_tool("explode", {"reason": "boom"})
    assert [t.name for t in listed.tools] == ["add", "explode"]
    assert result.content[0].text == "7" and failed.isError
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    calls = [("execute_tool add", []), ("execute_tool explode", [])]
    assert tree(spans) == [("invoke_agent mcp-agent", calls)]
    agent = by_name(spans, "invoke_agent mcp-agent")
    offered = [e for e in agent.events if e["name"] == "mcp.tools.list"]
    assert [e["attributes"]["agent_trace.tools.offered"] for e in offered] == [["add", "explode"]]
    add = by_name(spans, "execute_tool add")
    assert add.attributes["gen_ai.tool.name"] == "add"
    assert add.attributes["gen_ai.tool.type"] == "extension"
    assert add.attributes["gen_ai.tool.description"] == "Add two integers."
    assert add.attributes["mcp.method.name"] == "tools/call"
    assert "gen_ai.tool.call.id" not in add.attributes  # MCP has no call id of its own
    assert add.content["tool_arguments"] == {"a": 2, "b": 5}
    assert add.content["tool_result"]["content"][0]["text"] == "7"
    assert add.status == "UNSET"
    boom = by_name(spans, "execute_tool explode")
    assert boom.status == "ERROR" and boom.attributes["error.type"] == "tool_error"
    assert boom.content["tool_result"]["isError"] is True


async def test_call_inside_a_framework_tool_span_is_one_span_with_its_call_id(recording):
    async with create_connected_server_and_client_session(make_server()) as client:
        with oat.agent("a"), oat.tool("add", call_id="call_from_model", arguments={"a": 1, "b": 1}) as call:
            result = await client.call_tool("add", {"a": 1, "b": 1})
            call.set_result(result.content[0].text)
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    assert tree(spans) == [("invoke_agent a", [("execute_tool add", [])])]
    add = by_name(spans, "execute_tool add")
    assert add.attributes["gen_ai.tool.call.id"] == "call_from_model"
    assert add.attributes["mcp.method.name"] == "tools/call"  # the MCP layer added what it knew


async def test_transport_failure_is_recorded_and_reraised(recording):
    async with create_connected_server_and_client_session(make_server()) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
    with pytest.raises(Exception) as info:  # the session is closed now: the call fails
        await client.call_tool("add", {"a": 1, "b": 1})
    files = recording.files
    recording.stop()
    spans = [s for s in spans_of(files[0]) if s.name == "execute_tool add"]
    assert len(spans) == 2
    assert spans[1].status == "ERROR"
    assert spans[1].attributes["error.type"] == type(info.value).__qualname__
