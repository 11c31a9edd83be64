"""The weather agent on smolagents (a ``ToolCallingAgent`` on its ``OpenAIModel``, plain or with
``stream_outputs``), for trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python smolagents_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python smolagents_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent smolagents_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from smolagents import ActionStep, OpenAIModel, ToolCallingAgent, tool

WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")
INSTRUCTIONS = "You answer weather questions. Use the tools."


@tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(instructions: str = INSTRUCTIONS, stream: bool = False) -> ToolCallingAgent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    model = OpenAIModel(
        model_id="gpt-4o-mini",
        api_base=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        client_kwargs={"max_retries": 0},
    )
    return ToolCallingAgent(
        tools=[get_weather],
        model=model,
        name="weather",
        instructions=instructions,
        verbosity_level=0,
        stream_outputs=stream,
    )


def run(question: str, instructions: str, stream: bool) -> dict:
    agent = build(instructions, stream)
    with contextlib.redirect_stdout(sys.stderr):  # smolagents' console output: not our JSON line
        answer = agent.run(question)
    calls = [
        {"id": call.id, "name": call.name, "arguments": call.arguments}
        for step in agent.memory.steps
        if isinstance(step, ActionStep)
        for call in step.tool_calls or ()
        if call.name != "final_answer"
    ]
    return {"tool_calls": calls, "answer": answer}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=INSTRUCTIONS)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
