"""LangChain tools: one ``execute_tool`` span per call whichever entry point (run, arun, invoke,
ainvoke, LangGraph's ToolNode), the model's tool-call id on it, arguments and result in the
session, errors recorded and re-raised unchanged."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool

import otel_agent_trace as oat
from tests.context.helpers import ancestors, by_name, spans_of, tree


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def broken(x: int) -> int:
    """Always fails."""
    raise ValueError(f"bad {x}")


class Echo(BaseTool):
    name: str = "echo"
    description: str = "Echo the input back."

    def _run(self, query: str) -> str:
        return f"echo {query}"


def test_invoke_with_a_tool_call_carries_the_model_id(recording):
    with oat.agent("a"):
        out = add.invoke({"name": "add", "args": {"a": 2, "b": 3}, "id": "call_add_1", "type": "tool_call"})
    assert isinstance(out, ToolMessage) and out.content == "5" and out.tool_call_id == "call_add_1"
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    assert tree(spans) == [("invoke_agent a", [("execute_tool add", [])])]
    span = by_name(spans, "execute_tool add")
    assert span.attributes["gen_ai.tool.call.id"] == "call_add_1"
    assert span.attributes["gen_ai.tool.name"] == "add"
    assert span.attributes["gen_ai.tool.type"] == "function"
    assert span.attributes["gen_ai.tool.description"] == "Add two integers."
    assert span.attributes["agent_trace.tool.import_path"] == f"{__name__}:add"
    assert span.content == {"tool_arguments": {"a": 2, "b": 3}, "tool_result": "5"}
    assert span.status == "UNSET" and span.end_ns > span.start_ns


async def test_each_entry_point_gives_exactly_one_span(recording):
    with oat.agent("a"):
        assert add.run({"a": 1, "b": 1}) == 2
        assert add.invoke({"a": 1, "b": 2}) == 3
        assert await add.ainvoke({"a": 1, "b": 3}) == 4  # sync tool, async call: runs in an executor
        assert await shout.ainvoke({"text": "hi"}) == "HI"
        assert await shout.arun({"text": "yo"}) == "YO"
        assert Echo().invoke("x") == "echo x"
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    assert tree(spans) == [
        (
            "invoke_agent a",
            [
                ("execute_tool add", []),
                ("execute_tool add", []),
                ("execute_tool add", []),
                ("execute_tool shout", []),
                ("execute_tool shout", []),
                ("execute_tool echo", []),
            ],
        )
    ]
    echo = by_name(spans, "execute_tool echo")
    assert echo.attributes["agent_trace.tool.import_path"] == f"{__name__}:Echo"
    assert echo.content == {"tool_arguments": "x", "tool_result": "echo x"}
    assert "gen_ai.tool.call.id" not in echo.attributes  # no model asked for it


def test_errors_are_recorded_and_reraised_unchanged(recording):
    with pytest.raises(ValueError, match="bad 7") as info:
        broken.invoke({"x": 7})
    assert type(info.value) is ValueError
    handled = StructuredTool.from_function(_raise_tool_exception, name="handled", handle_tool_error=True)
    out = handled.invoke({"name": "handled", "args": {"x": 1}, "id": "call_h", "type": "tool_call"})
    assert out.status == "error" and "nope" in out.content
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    failed = by_name(spans, "execute_tool broken")
    assert failed.status == "ERROR" and failed.attributes["error.type"] == "ValueError"
    assert [e["name"] for e in failed.events] == ["exception"]
    soft = by_name(spans, "execute_tool handled")
    assert soft.status == "ERROR" and soft.attributes["error.type"] == "tool_error"
    assert soft.attributes["gen_ai.tool.call.id"] == "call_h"


def _raise_tool_exception(x: int) -> int:
    """Fails politely."""
    raise ToolException("nope")


def test_langgraph_tool_node_links_each_call_to_the_model_turn(recording):
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    turn = AIMessage(
        content="",
        tool_calls=[
            {"name": "add", "args": {"a": 1, "b": 2}, "id": "call_A", "type": "tool_call"},
            {"name": "add", "args": {"a": 3, "b": 4}, "id": "call_B", "type": "tool_call"},
        ],
    )
    model = FakeMessagesListChatModel(responses=[turn])  # scripted: always asks for the two calls

    def call_model(state: MessagesState) -> dict:
        ai = model.invoke(state["messages"])
        oat.record_message("assistant", ai.content, tool_calls=ai.tool_calls)
        return {"messages": [ai]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([add]))  # runs the two calls on worker threads
    graph.add_edge(START, "model")
    graph.add_edge("model", "tools")
    graph.add_edge("tools", END)
    with oat.agent("graph"):
        result = graph.compile().invoke({"messages": [("user", "add things")]})
    assert [m.content for m in result["messages"][2:]] == ["3", "7"]
    files = recording.files
    recording.stop()
    spans = spans_of(files[0])
    agent = by_name(spans, "invoke_agent graph")
    tools = [s for s in spans if s.name == "execute_tool add"]
    assert len(tools) == 2  # exactly one span per call: invoke → run is not counted twice
    # under the agent span (directly, or under graph spans the LangChain instrumentation adds)
    assert all(agent in ancestors(spans, s) for s in tools)
    by_id = {s.attributes["gen_ai.tool.call.id"]: s for s in tools}
    assert set(by_id) == {"call_A", "call_B"}
    assert by_id["call_A"].content["tool_arguments"] == {"a": 1, "b": 2}
    assert by_id["call_B"].content["tool_result"] == "7"
    message = next(e for e in oat.load_session(files[0]).events if e.type == "message")
    assert [c["id"] for c in message.data["tool_calls"]] == ["call_A", "call_B"]


def test_uninstrumented_tool_makes_no_span(recording):
    from otel_agent_trace.instrumentation.langchain_tools import LangChainToolsInstrumentor

    LangChainToolsInstrumentor().uninstrument()
    try:
        assert add.invoke({"a": 1, "b": 1}) == 2
    finally:
        LangChainToolsInstrumentor().instrument()
    files = recording.files
    recording.stop()
    assert spans_of(files[0]) == []
