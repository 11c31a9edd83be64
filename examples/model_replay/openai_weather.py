"""A tool-calling agent on the bare OpenAI SDK (chat completions, plain or streamed), for trying
model replay (docs/model-replay.md)::

    AGENT_TRACE_TIER=checkpoint OPENAI_BASE_URL=... opentelemetry-instrument python openai_weather.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python openai_weather.py

Arguments: ``--stream`` streams the model's answers; ``--responses`` uses the Responses API
instead of chat completions; ``--prompt TEXT`` changes the system prompt (to see a divergence
reported). It prints one JSON line: the tool calls made and the answer.
"""

from __future__ import annotations

import argparse
import json
import os

import openai

import otel_agent_trace as oat

SYSTEM_PROMPT = "You answer weather questions. Use the tools."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
WEATHER_FILE = os.environ.get("WEATHER_FILE", "weather.json")


@oat.tool
def get_weather(city: str) -> dict[str, object]:
    """The weather in a city (read from a local file, so a replay can run without it)."""
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.load(f)[city]


def _complete(client: openai.OpenAI, messages: list[dict], stream: bool) -> dict:
    """One model call; the assistant message as a dict (streamed chunks put together)."""
    if not stream:
        message = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        return message.choices[0].message.model_dump(exclude_none=True)
    content, calls = "", {}
    for chunk in client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=TOOLS, stream=True
    ):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for call in delta.tool_calls or []:
            slot = calls.setdefault(
                call.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            slot["id"] = call.id or slot["id"]
            if call.function:
                slot["function"]["name"] += call.function.name or ""
                slot["function"]["arguments"] += call.function.arguments or ""
    message: dict = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def _respond(client: openai.OpenAI, stream: bool, **request) -> object:
    """One Responses API call; streamed, the response its ``response.completed`` event carries."""
    if not stream:
        return client.responses.create(**request)
    completed = None
    for event in client.responses.create(stream=True, **request):
        if event.type == "response.completed":
            completed = event.response
    return completed


def run_responses(question: str, system: str, stream: bool = False) -> dict:
    """The same loop on the Responses API (function calls and their outputs as input items)."""
    client = openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "sk-example"), max_retries=0)
    tools = [{"type": "function", **TOOLS[0]["function"]}]
    items: list = [{"role": "user", "content": question}]
    tool_calls = []
    for _ in range(5):
        request = {"model": "gpt-4o-mini", "instructions": system, "input": items, "tools": tools}
        response = _respond(client, stream, **request)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return {"tool_calls": tool_calls, "answer": response.output_text}
        for call in calls:
            arguments = json.loads(call.arguments)
            tool_calls.append({"id": call.call_id, "name": call.name, "arguments": arguments})
            items.append(call.model_dump(exclude_none=True))
            output = json.dumps(get_weather(**arguments))
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    return {"tool_calls": tool_calls, "answer": None}


def run(question: str, system: str, stream: bool) -> dict:
    client = openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "sk-example"), max_retries=0)
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    tool_calls = []
    for _ in range(5):
        message = _complete(client, messages, stream)
        messages.append(message)
        if not message.get("tool_calls"):
            return {"tool_calls": tool_calls, "answer": message.get("content")}
        for call in message["tool_calls"]:
            arguments = json.loads(call["function"]["arguments"])
            tool_calls.append({"id": call["id"], "name": call["function"]["name"], "arguments": arguments})
            result = get_weather(**arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return {"tool_calls": tool_calls, "answer": None}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--responses", action="store_true")
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    if args.responses:
        print(json.dumps(run_responses(args.question, args.prompt, args.stream)))
    else:
        print(json.dumps(run(args.question, args.prompt, args.stream)))
