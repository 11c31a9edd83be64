"""A LangGraph ReAct agent on an OpenAI-compatible endpoint (``OPENAI_BASE_URL``; the tests point
it at a local fake server). ``make_graph`` is the factory for ``otel-agent-trace resume``."""

from __future__ import annotations

import os
import warnings

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def make_graph():  # noqa: ANN201  (a compiled LangGraph graph)
    chat = ChatOpenAI(
        model="gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-test"),
        max_retries=0,
        temperature=0.1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(chat, [get_weather], prompt="You answer weather questions.", name="weather")


if __name__ == "__main__":
    out = make_graph().invoke({"messages": [("user", "What's the weather in Paris?")]})
    print(out["messages"][-1].content)
