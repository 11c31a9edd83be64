"""The weather agent on Google ADK (an ``LlmAgent`` on ADK's ``OpenAILlm``, run by an
``InMemoryRunner``, plain or with SSE streaming), for trying model replay (docs/model-replay.md)
and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python adk_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python adk_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent adk_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.integrations.openai import OpenAILlm
from google.adk.runners import InMemoryRunner
from google.genai import types

INSTRUCTION = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


def get_weather(city: str) -> str:
    """The weather in a city."""
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(instruction: str = INSTRUCTION) -> LlmAgent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    model = OpenAILlm(
        model="gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
    )
    return LlmAgent(name="weather", model=model, instruction=instruction, tools=[get_weather])


async def _run(agent: LlmAgent, question: str, stream: bool) -> dict:
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="user")
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    message = types.Content(role="user", parts=[types.Part(text=question)])
    calls, answer = [], None
    async for event in runner.run_async(
        user_id="user", session_id=session.id, new_message=message, run_config=config
    ):
        for call in [] if event.partial else event.get_function_calls():  # (streamed pieces: partial)
            calls.append({"id": call.id, "name": call.name, "arguments": call.args})
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts)
    return {"tool_calls": calls, "answer": answer}


def run(question: str, instruction: str, stream: bool) -> dict:
    return asyncio.run(_run(build(instruction), question, stream))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=INSTRUCTION)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
