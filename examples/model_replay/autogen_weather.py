"""The weather agent on AutoGen (an ``AssistantAgent`` on ``OpenAIChatCompletionClient``, ``run``
or ``run_stream``), for trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python autogen_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python autogen_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent autogen_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import ToolCallRequestEvent
from autogen_ext.models.openai import OpenAIChatCompletionClient

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


def get_weather(city: str) -> str:
    """The weather in a city."""
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(system: str = SYSTEM_PROMPT, stream: bool = False) -> AssistantAgent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    client = OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        max_retries=0,
    )
    return AssistantAgent(
        "weather",
        model_client=client,
        tools=[get_weather],
        system_message=system,
        reflect_on_tool_use=True,
        model_client_stream=stream,
    )


async def _run(agent: AssistantAgent, question: str, stream: bool) -> object:
    if not stream:
        return await agent.run(task=question)
    async for item in agent.run_stream(task=question):
        last = item
    return last


def run(question: str, system: str, stream: bool) -> dict:
    result = asyncio.run(_run(build(system, stream), question, stream))
    calls = [
        {"id": call.id, "name": call.name, "arguments": json.loads(call.arguments)}
        for message in result.messages
        if isinstance(message, ToolCallRequestEvent)
        for call in message.content
    ]
    return {"tool_calls": calls, "answer": result.messages[-1].content}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
