"""The weather agent on Pydantic AI (its OpenAI chat model, ``run_sync`` or ``run_stream``), for
trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python pydantic_ai_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python pydantic_ai_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent pydantic_ai_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


def get_weather(city: str) -> str:
    """The weather in a city."""
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(system: str = SYSTEM_PROMPT) -> Agent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    provider = OpenAIProvider(api_key=os.environ.get("OPENAI_API_KEY", "sk-example"))
    agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=provider), name="weather", instructions=system)
    agent.tool_plain(get_weather)
    return agent


async def _streamed(agent: Agent, question: str) -> tuple[str, list]:
    async with agent.run_stream(question) as run:
        answer = await run.get_output()
    return answer, run.all_messages()


def run(question: str, system: str, stream: bool) -> dict:
    agent = build(system)
    if stream:
        answer, messages = asyncio.run(_streamed(agent, question))
    else:
        result = agent.run_sync(question)
        answer, messages = result.output, result.all_messages()
    calls = [
        {"id": part.tool_call_id, "name": part.tool_name, "arguments": part.args_as_dict()}
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]
    return {"tool_calls": calls, "answer": answer}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
