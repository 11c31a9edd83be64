"""MCP: a real server (FastMCP on mcp 1.x, MCPServer on 2.x) and client over the in-memory
transport. Each call_tool is one ``execute_tool`` span under the calling span; the tools the
server offered are recorded where they were listed. The same tests run on mcp 1.x (the main
environment) and on mcp 2.x (``python -m tests.services.mcp2 run``)."""

from __future__ import annotations

import pytest

import otel_agent_trace as oat
from tests.context.helpers import ancestors, by_name, spans_of, tree

from .mcp_versions import MCP2, connected, is_error, make_server, session_of


def make_calc():
    server = make_server("calc")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(reason)

    return server


def tool_spans(spans):
    """Every span that says it is a tool call (ours, or one mcp 2.x made of its own)."""
    return [
        s
        for s in spans
        if s.attributes.get("gen_ai.operation.name") == "execute_tool" or "tools/call" in s.name
    ]


def our_tree(spans, agent):
    """The agent's subtree, of the spans that are not mcp 2.x's own ``tools/list`` spans (mcp 1.x
    makes no span; its listing is an event of ours either way)."""
    kept = [s for s in spans if not (s.name == "tools/list" or s.name == "MCP send tools/list")]
    return tree(kept, agent.span_id)


async def test_call_tool_spans_under_the_agent_with_the_offered_list(recording):
    async with connected(make_calc()) as client:
        with oat.agent("mcp-agent"):
            listed = await client.list_tools()
            result = await client.call_tool("add", {"a": 2, "b": 5})
            failed = await client.call_tool("explode", {"reason": "boom"})
    assert [t.name for t in listed.tools] == ["add", "explode"]
    assert result.content[0].text == "7" and is_error(failed)
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    agent = by_name(spans, "invoke_agent mcp-agent")
    assert our_tree(spans, agent) == [("execute_tool add", []), ("execute_tool explode", [])]
    if not MCP2:
        assert tree(spans) == [("invoke_agent mcp-agent", our_tree(spans, agent))]
    # exactly one tool span per call: mcp 2.x's own spans of these calls are folded into ours
    assert sorted(s.name for s in tool_spans(spans)) == ["execute_tool add", "execute_tool explode"]
    offered = [e for e in agent.events if e["name"] == "mcp.tools.list"]
    assert [e["attributes"]["agent_trace.tools.offered"] for e in offered] == [["add", "explode"]]
    add = by_name(spans, "execute_tool add")
    assert add.trace_id == agent.trace_id
    assert add.attributes["gen_ai.tool.name"] == "add"
    assert add.attributes["gen_ai.tool.type"] == "extension"
    assert add.attributes["gen_ai.tool.description"] == "Add two integers."
    assert add.attributes["mcp.method.name"] == "tools/call"
    assert "gen_ai.tool.call.id" not in add.attributes  # MCP has no call id of its own
    assert add.content["tool_arguments"] == {"a": 2, "b": 5}
    assert add.content["tool_result"]["content"][0]["text"] == "7"
    assert add.content["tool_result"]["isError"] is False  # the wire's names, on 1.x and 2.x
    assert add.status == "UNSET"
    boom = by_name(spans, "execute_tool explode")
    assert boom.status == "ERROR" and boom.attributes["error.type"] == "tool_error"
    assert boom.content["tool_result"]["isError"] is True


async def test_bare_session_call_tool_is_one_span(recording):
    """What Strands and the OpenAI Agents SDK call: ``ClientSession.call_tool`` itself."""
    async with connected(make_calc()) as client:
        session = session_of(client)
        with oat.agent("bare"):
            await session.list_tools()
            result = await session.call_tool("add", {"a": 3, "b": 4})
    assert result.content[0].text == "7"
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    agent = by_name(spans, "invoke_agent bare")
    assert our_tree(spans, agent) == [("execute_tool add", [])]
    assert [s.name for s in tool_spans(spans)] == ["execute_tool add"]
    add = by_name(spans, "execute_tool add")
    assert add.attributes["gen_ai.tool.description"] == "Add two integers."
    assert add.content["tool_arguments"] == {"a": 3, "b": 4}
    assert add.content["tool_result"]["structuredContent"] == {"result": 7}


@pytest.mark.skipif(not MCP2, reason="mcp 1.x runs an in-memory server's handlers in its own task")
async def test_work_the_tool_does_is_under_its_span(recording, tmp_path):
    """The server runs in this process: what its tool does (a file written) is recorded under the
    call's one ``execute_tool`` span."""
    server = make_server("files")
    target = tmp_path / "note.txt"

    @server.tool()
    async def write_note(text: str) -> str:
        """Write a note."""
        with oat.tool("inner-step"):
            target.write_text(text)
        return "written"

    async with connected(server) as client, oat.agent("writer"):
        await client.call_tool("write_note", {"text": "hello"})
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    inner = by_name(spans, "execute_tool inner-step")
    assert [s.name for s in ancestors(spans, inner)][:2] == ["execute_tool write_note", "invoke_agent writer"]


async def test_call_inside_a_framework_tool_span_is_one_span_with_its_call_id(recording):
    async with connected(make_calc()) as client:
        with oat.agent("a"), oat.tool("add", call_id="call_from_model", arguments={"a": 1, "b": 1}) as call:
            result = await client.call_tool("add", {"a": 1, "b": 1})
            call.set_result(result.content[0].text)
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    agent = by_name(spans, "invoke_agent a")
    assert our_tree(spans, agent) == [("execute_tool add", [])]
    assert [s.name for s in tool_spans(spans)] == ["execute_tool add"]
    add = by_name(spans, "execute_tool add")
    assert add.attributes["gen_ai.tool.call.id"] == "call_from_model"
    assert add.attributes["mcp.method.name"] == "tools/call"  # the MCP layer added what it knew


async def test_transport_failure_is_recorded_and_reraised(recording):
    async with connected(make_calc()) as client:
        session = session_of(client)
        await session.call_tool("add", {"a": 1, "b": 1})
    with pytest.raises(Exception) as info:  # the session is closed now: the call fails
        await session.call_tool("add", {"a": 1, "b": 1})
    files = recording.files
    recording.stop()
    spans = [s for s in spans_of(files[0]) if s.name == "execute_tool add"]
    assert len(spans) == 2
    assert spans[1].status == "ERROR"
    assert spans[1].attributes["error.type"] == type(info.value).__qualname__
