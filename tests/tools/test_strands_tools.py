"""Strands Agents with a scripted model: its own ``execute_tool`` spans (one per call, never a
second one of ours) get the arguments, result, call id, type and import path; work a tool hands
to a thread pool stays under it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

strands = pytest.importorskip("strands")

import otel_agent_trace as oat  # noqa: E402
from tests.context.helpers import ancestors, spans_of  # noqa: E402

from .scripted_strands import ScriptedModel  # noqa: E402


@strands.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    with ThreadPoolExecutor(max_workers=1) as pool:  # work on another thread stays under the tool
        return pool.submit(_inner_sum, a, b).result()


def _inner_sum(a: int, b: int) -> int:
    with oat.tool("inner-sum"):
        return a + b


@strands.tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def test_strands_tool_spans_are_completed_not_duplicated(recording):
    model = ScriptedModel(
        [
            [
                {"text": "Let me compute."},
                {"toolUse": {"toolUseId": "tooluse_add_1", "name": "add", "input": {"a": 2, "b": 3}}},
                {"toolUse": {"toolUseId": "tooluse_boom_1", "name": "explode", "input": {"reason": "no"}}},
            ],
            [{"text": "The answer is 5."}],
        ]
    )
    agent = strands.Agent(model=model, tools=[add, explode], callback_handler=None)
    result = agent("what is 2 + 3?")
    assert "5" in str(result) and model.calls == 2
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert sorted(s.name for s in tools) == [
        "execute_tool add",
        "execute_tool explode",
        "execute_tool inner-sum",
    ]
    add_span = next(s for s in tools if s.name == "execute_tool add")
    assert add_span.attributes["gen_ai.tool.call.id"] == "tooluse_add_1"
    assert add_span.attributes["gen_ai.tool.type"] == "function"
    assert add_span.attributes["agent_trace.tool.import_path"] == f"{__name__}:add"
    assert add_span.content["tool_arguments"] == {"a": 2, "b": 3}
    assert add_span.content["tool_result"] == [{"text": "5"}]
    inner = next(s for s in tools if s.name == "execute_tool inner-sum")
    assert inner.parent_span_id == add_span.span_id
    boom = next(s for s in tools if s.name == "execute_tool explode")
    assert boom.attributes["gen_ai.tool.call.id"] == "tooluse_boom_1"
    assert boom.status == "ERROR" and boom.attributes["error.type"] == "RuntimeError"
    agent_span = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert all(agent_span in ancestors(spans, s) for s in (add_span, boom))


def test_strands_mcp_tool_is_one_span_with_the_model_call_id(recording):
    """DevDuck's setup: Strands calling an MCP server's tool. Strands' span and the MCP layer are
    the same call, so there is one span, with Strands' call id and the MCP details."""
    from contextlib import asynccontextmanager

    import anyio
    from mcp.server.fastmcp import FastMCP
    from mcp.shared.memory import create_client_server_memory_streams
    from strands.tools.mcp import MCPClient

    server = FastMCP("calc")

    @server.tool()
    def subtract(a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b

    @asynccontextmanager
    async def in_memory_transport():
        low = server._mcp_server
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tg,
        ):
            options = low.create_initialization_options()
            tg.start_soon(lambda: low.run(server_streams[0], server_streams[1], options))
            try:
                yield client_streams
            finally:
                tg.cancel_scope.cancel()

    use = {"toolUseId": "tooluse_sub_1", "name": "subtract", "input": {"a": 9, "b": 4}}
    model = ScriptedModel([[{"toolUse": use}], [{"text": "5"}]])
    with MCPClient(in_memory_transport) as client:
        agent = strands.Agent(model=model, tools=client.list_tools_sync(), callback_handler=None)
        agent("9 - 4?")
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    calls = [s for s in spans if s.name == "execute_tool subtract"]
    assert len(calls) == 1
    (call,) = calls
    assert call.attributes["gen_ai.tool.call.id"] == "tooluse_sub_1"
    assert call.attributes["gen_ai.tool.type"] == "extension"
    assert call.attributes["mcp.method.name"] == "tools/call"
    assert call.content["tool_arguments"] == {"a": 9, "b": 4}
    assert call.content["tool_result"][0]["text"] == "5"
