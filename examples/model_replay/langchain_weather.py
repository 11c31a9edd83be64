"""The weather agent of ``openai_weather.py`` on LangChain (``langchain-openai``'s ``ChatOpenAI``
with a tool bound), plain or streamed, for trying model replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python langchain_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python langchain_weather.py

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import json
import os

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

import otel_agent_trace as oat

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@oat.tool
def get_weather(city: str) -> dict[str, object]:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.load(f)[city]


TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def run(question: str, system: str, stream: bool) -> dict:
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
            result = get_weather(**call["args"])
            messages.append(ToolMessage(json.dumps(result), tool_call_id=call["id"]))
    return {"tool_calls": tool_calls, "answer": None}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream)))
