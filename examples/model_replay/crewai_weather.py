"""The weather agent on CrewAI (a crew of one agent with a tool, on CrewAI's native OpenAI
provider), for trying model replay (docs/model-replay.md) and resume::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python crewai_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python crewai_weather.py
    otel-agent-trace resume agent-sessions/<session>.checkpoint.jsonl \\
        --agent crewai_weather:build "And tomorrow?"

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # CrewAI's own telemetry would send to CrewAI
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402

BACKSTORY = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@tool("get_weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    try:
        with open(WEATHER_FILE, encoding="utf-8") as f:
            return json.dumps(json.load(f)[city])
    except OSError:
        return f"18°C and sunny in {city}"


def build(backstory: str = BACKSTORY) -> Agent:
    """The agent (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment)."""
    llm = LLM(
        model="openai/gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-example"),
        max_retries=0,
    )
    return Agent(
        role="weather", goal="Answer weather questions", backstory=backstory, tools=[get_weather], llm=llm
    )


def run(question: str, backstory: str) -> dict:
    agent = build(backstory)
    task = Task(description=question, expected_output="The weather.", agent=agent)
    result = Crew(agents=[agent], tasks=[task]).kickoff()
    calls = [
        {
            "id": call["id"],
            "name": call["function"]["name"],
            "arguments": json.loads(call["function"]["arguments"]),
        }
        for message in result.tasks_output[0].messages
        for call in message.get("tool_calls") or ()
    ]
    return {"tool_calls": calls, "answer": result.raw}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--stream", action="store_true", help="(not used: the crew's answers are not streamed)"
    )
    parser.add_argument("--prompt", default=BACKSTORY)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt), ensure_ascii=False))
