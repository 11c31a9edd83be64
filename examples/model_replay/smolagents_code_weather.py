"""The weather agent on smolagents as a ``CodeAgent`` (its model answers with Python code that
calls the tools itself: no call ids), on its ``OpenAIModel``, plain or with ``stream_outputs``,
for trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument \\
        python smolagents_code_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python smolagents_code_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent smolagents_code_weather:build "And tomorrow?"

The code runs in smolagents' local Python executor (the agent's own choice; see smolagents'
documentation on sandboxes). It prints one JSON line: the code of each step, what it printed
(the observation the model is sent: the tool's result, replayed from the recording when
model-replayed) and the answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from smolagents import ActionStep, CodeAgent, OpenAIModel, tool

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


def build(instructions: str = INSTRUCTIONS, stream: bool = False) -> CodeAgent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    model = OpenAIModel(
        model_id="gpt-4o-mini",
        api_base=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        client_kwargs={"max_retries": 0},
    )
    return CodeAgent(
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
    steps = [step for step in agent.memory.steps if isinstance(step, ActionStep)]
    return {
        "code": [step.code_action for step in steps],
        "observations": [step.observations for step in steps],
        "answer": answer,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=INSTRUCTIONS)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream), ensure_ascii=False))
