"""Strands and LangGraph runs (their real model clients against the replay server), plain and
streamed: one trace per run, one tree under the run's agent span, the session id on every span."""

from __future__ import annotations

from typing import Any

import pytest

from tests.context.helpers import spans_of

QUESTION = "What's the weather in Paris?"


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _one_tree(session: Any, memory_exporter: Any, agent_span: str) -> list[Any]:
    files = [p for p in session.files if "checkpoint" not in p.name]
    session_id = session.session_id
    session.stop()
    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == agent_span
    spans = spans_of(files[0])
    assert len({s.trace_id for s in spans}) == 1 and len(spans) == len(finished)
    return list(finished)


def test_strands_run(llm, checkpoint, memory_exporter):
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"base_url": llm.openai_url, "api_key": "sk-test", "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    agent = Agent(model=model, tools=[tool(get_weather)], name="weather", callback_handler=None)
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")  # Strands always streams
    assert "sunny" in str(agent(QUESTION))
    spans = _one_tree(checkpoint, memory_exporter, "invoke_agent weather")
    names = [s.name for s in spans]
    assert names.count("chat gpt-4o-mini") == 2 and names.count("execute_tool get_weather") == 1
    tool_span = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool_span.status.is_ok


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_langgraph_run(streamed, llm, checkpoint, memory_exporter):
    import warnings

    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0, streaming=streamed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        from langgraph.prebuilt import create_react_agent

        graph = create_react_agent(chat, [tool(get_weather)], name="weather")
    suffix = "_stream" if streamed else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    if streamed:
        list(graph.stream({"messages": [("user", QUESTION)]}, stream_mode="messages"))
    else:
        graph.invoke({"messages": [("user", QUESTION)]})
    spans = _one_tree(checkpoint, memory_exporter, "invoke_agent weather")
    chats = [s for s in spans if s.name == "chat gpt-4o-mini"]
    (tool_span,) = [s for s in spans if s.name == "execute_tool get_weather"]
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert [c.attributes["gen_ai.response.id"] for c in chats] == [
        f"chatcmpl-tool00{2 if streamed else 1}",
        f"chatcmpl-final0{2 if streamed else 1}",
    ]
