"""The weather agent on LlamaIndex (a ``FunctionAgent`` on its OpenAI LLM, plain or streamed), for
trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python llamaindex_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python llamaindex_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent llamaindex_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.llms.openai import OpenAI

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


def get_weather(city: str) -> str:
    """The weather in a city."""
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(system: str = SYSTEM_PROMPT, stream: bool = False) -> FunctionAgent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    llm = OpenAI(
        model="gpt-4o-mini",
        api_base=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        max_retries=0,
    )
    return FunctionAgent(tools=[get_weather], llm=llm, name="weather", system_prompt=system, streaming=stream)


async def _run(agent: FunctionAgent, question: str) -> tuple[str, list[dict]]:
    handler = agent.run(user_msg=question)
    calls = []
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            calls.append({"id": event.tool_id, "name": event.tool_name, "arguments": event.tool_kwargs})
    return str(await handler), calls


def run(question: str, system: str, stream: bool) -> dict:
    answer, calls = asyncio.run(_run(build(system, stream), question))
    return {"tool_calls": calls, "answer": answer}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
