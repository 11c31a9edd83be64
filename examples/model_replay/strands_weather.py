"""The weather agent on Strands Agents (its OpenAI provider, which always streams), for trying
model replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python strands_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python strands_weather.py

It prints one JSON line: the tool calls made and the answer. ``--framework-tool``: the tool is a
Strands ``@tool`` only (no ``@oat.tool`` under it).
"""

from __future__ import annotations

import argparse
import json
import os

from strands import Agent, tool
from strands.models.openai import OpenAIModel

import otel_agent_trace as oat

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@tool
@oat.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


@tool(name="get_weather")
def get_weather_tool(city: str) -> str:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


def run(question: str, system: str, framework_tool: bool = False) -> dict:
    model = OpenAIModel(
        client_args={"api_key": os.environ.get("OPENAI_API_KEY", "sk-example"), "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    agent = Agent(
        model=model,
        tools=[get_weather_tool if framework_tool else get_weather],
        system_prompt=system,
        name="weather",
        callback_handler=None,
    )
    result = agent(question)
    calls = [
        {
            "id": block["toolUse"]["toolUseId"],
            "name": block["toolUse"]["name"],
            "arguments": block["toolUse"]["input"],
        }
        for message in agent.messages
        for block in message["content"]
        if "toolUse" in block
    ]
    return {"tool_calls": calls, "answer": str(result).strip()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true", help="(Strands always streams)")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("--framework-tool", action="store_true", help="a Strands @tool only")
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.framework_tool)))
