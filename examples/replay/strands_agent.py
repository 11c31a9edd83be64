"""A Strands agent on an OpenAI-compatible endpoint (``OPENAI_BASE_URL``; the tests point it at a
local fake server that replays recorded answers). ``make_agent`` is the factory for::

    otel-agent-trace resume <session>.checkpoint.jsonl --agent strands_agent:make_agent "and tomorrow?"
"""

from __future__ import annotations

import os

from strands import Agent, tool
from strands.models.openai import OpenAIModel


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def make_agent() -> Agent:
    model = OpenAIModel(
        client_args={
            "base_url": os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            "api_key": os.environ.get("OPENAI_API_KEY", "sk-test"),
            "max_retries": 0,
        },
        model_id="gpt-4o-mini",
    )
    return Agent(
        model=model,
        tools=[get_weather],
        system_prompt="You answer weather questions.",
        name="weather",
        callback_handler=None,
    )


if __name__ == "__main__":
    print(make_agent()("What's the weather in Paris?"))
