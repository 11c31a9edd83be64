"""The weather agent of ``openai_weather.py`` on LangChain (``langchain-openai``'s ``ChatOpenAI``
with a tool bound), plain or streamed, for trying model replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python langchain_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python langchain_weather.py

It prints one JSON line: the tool calls made and the answer. ``--framework-tool``: the tool is a
LangChain ``@tool`` only (no ``@oat.tool`` under it), invoked with the model's ``ToolCall``.
"""

from __future__ import annotations

import argparse
import json
import os

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import otel_agent_trace as oat

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@oat.tool
def get_weather(city: str) -> dict[str, object]:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.load(f)[city]


@tool("get_weather")
def get_weather_tool(city: str) -> str:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def run(question: str, system: str, stream: bool, framework_tool: bool = False) -> dict:
    model = ChatOpenAI(
        model="gpt-4o-mini",
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        max_retries=0,
        streaming=stream,
    ).bind_tools([TOOL])
    messages: list = [SystemMessage(system), HumanMessage(question)]
    tool_calls = []
    for _ in range(5):
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return {"tool_calls": tool_calls, "answer": reply.content}
        for call in reply.tool_calls:
            tool_calls.append({"id": call["id"], "name": call["name"], "arguments": call["args"]})
            if framework_tool:  # a ToolMessage, from LangChain's own tool call
                messages.append(get_weather_tool.invoke(call))
                continue
            result = get_weather(**call["args"])
            messages.append(ToolMessage(json.dumps(result), tool_call_id=call["id"]))
    return {"tool_calls": tool_calls, "answer": None}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("--framework-tool", action="store_true", help="a LangChain @tool only")
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream, args.framework_tool)))
