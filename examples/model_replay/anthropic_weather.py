"""The weather agent on the bare Anthropic SDK (messages, plain or streamed), for trying model
replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint ANTHROPIC_BASE_URL=... opentelemetry-instrument python anthropic_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python anthropic_weather.py

It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import json
import os

import anthropic

import otel_agent_trace as oat

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")
TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


@oat.tool
def get_weather(city: str) -> dict[str, object]:
    """The weather in a city."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.load(f)[city]


def _complete(client: anthropic.Anthropic, system: str, messages: list[dict], stream: bool) -> list[dict]:
    kwargs = {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": system, "messages": messages}
    if stream:
        with client.messages.stream(**kwargs, tools=TOOLS) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs, tools=TOOLS)
    return [block.model_dump(exclude_none=True) for block in message.content]


def run(question: str, system: str, stream: bool) -> dict:
    client = anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY", "sk-ant-example"), max_retries=0)
    messages: list[dict] = [{"role": "user", "content": question}]
    tool_calls = []
    for _ in range(5):
        blocks = _complete(client, system, messages, stream)
        messages.append({"role": "assistant", "content": blocks})
        uses = [b for b in blocks if b["type"] == "tool_use"]
        if not uses:
            return {"tool_calls": tool_calls, "answer": "".join(b.get("text", "") for b in blocks)}
        results = []
        for use in uses:
            tool_calls.append({"id": use["id"], "name": use["name"], "arguments": use["input"]})
            output = json.dumps(get_weather(**use["input"]))
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": output})
        messages.append({"role": "user", "content": results})
    return {"tool_calls": tool_calls, "answer": None}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    print(json.dumps(run(args.question, args.prompt, args.stream)))
