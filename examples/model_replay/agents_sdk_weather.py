"""The weather agent of ``openai_weather.py`` on the OpenAI Agents SDK (chat completions model,
``Runner.run_sync`` or ``Runner.run_streamed``), for trying model replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python agents_sdk_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python agents_sdk_weather.py

It prints one JSON line: the tool calls made and the answer. ``--framework-tool``: the tool is a
``@function_tool`` only (no ``@oat.tool`` under it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

import agents
import openai
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from agents.items import ToolCallItem

import otel_agent_trace as oat

agents.set_tracing_disabled(True)  # the SDK's own tracing would export to the vendor
SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@function_tool
@oat.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


@function_tool(name_override="get_weather")
def get_weather_tool(city: str) -> str:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


def build(system: str, framework_tool: bool = False) -> Agent:
    client = openai.AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY", "sk-example"), max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    return Agent(
        name="weather",
        instructions=system,
        model=model,
        tools=[get_weather_tool if framework_tool else get_weather],
    )


async def _streamed(agent: Agent, question: str) -> object:
    run = Runner.run_streamed(agent, question)
    async for _event in run.stream_events():
        pass
    return run


def run(question: str, system: str, stream: bool, framework_tool: bool = False) -> dict:
    agent = build(system, framework_tool)
    result = asyncio.run(_streamed(agent, question)) if stream else Runner.run_sync(agent, question)
    calls = [
        {
            "id": item.raw_item.call_id,
            "name": item.raw_item.name,
            "arguments": json.loads(item.raw_item.arguments),
        }
        for item in result.new_items
        if isinstance(item, ToolCallItem)
    ]
    return {"tool_calls": calls, "answer": result.final_output}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("--framework-tool", action="store_true", help="a @function_tool only")
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream, args.framework_tool)))
