"""A tool-calling agent on boto3's ``bedrock-runtime`` client (Converse, plain or streamed), then
one ``invoke_model`` call (a body read as a stream), against ``BEDROCK_ENDPOINT``. Prints one JSON
line: the answers as the agent read them.

Arguments: ``--stream`` (``converse_stream``), ``--prompt TEXT`` (another system prompt, to see a
divergence)."""

from __future__ import annotations

import argparse
import json
import os

import boto3
from botocore.config import Config

import otel_agent_trace as oat

MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Weather of a city.",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
            }
        }
    ]
}


@oat.tool
def get_weather(city: str) -> dict[str, object]:
    with open(os.environ["WEATHER_FILE"], encoding="utf-8") as f:
        return json.load(f)[city]


def _converse(client, stream: bool, **request) -> dict:
    """The assistant message (a stream's events put together) and the stop reason."""
    if not stream:
        response = client.converse(**request)
        return {"message": response["output"]["message"], "stop": response["stopReason"]}
    content: list[dict] = []
    stop, tool_input = None, ""
    for event in client.converse_stream(**request)["stream"]:
        if "contentBlockStart" in event:
            use = event["contentBlockStart"]["start"]["toolUse"]
            content.append({"toolUse": {**use, "input": {}}})
            tool_input = ""
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                if not content or "text" not in content[-1]:
                    content.append({"text": ""})
                content[-1]["text"] += delta["text"]
            elif "toolUse" in delta:
                tool_input += delta["toolUse"]["input"]
        elif "contentBlockStop" in event and content and "toolUse" in content[-1]:
            content[-1]["toolUse"]["input"] = json.loads(tool_input) if tool_input else {}
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    return {"message": {"role": "assistant", "content": content}, "stop": stop}


def run(stream: bool, system: str) -> dict:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=os.environ["BEDROCK_ENDPOINT"],
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test-secret"),
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    messages: list[dict] = [{"role": "user", "content": [{"text": "What's the weather in Paris?"}]}]
    request = {"modelId": MODEL, "system": [{"text": system}], "toolConfig": TOOLS}
    with oat.agent("bedrock-weather"):
        first = _converse(client, stream, messages=messages, **request)
        messages.append(first["message"])
        results = []
        for block in first["message"]["content"]:
            if "toolUse" in block:
                use = block["toolUse"]
                results.append(
                    {
                        "toolResult": {
                            "toolUseId": use["toolUseId"],
                            "content": [{"json": get_weather(**use["input"])}],
                        }
                    }
                )
        messages.append({"role": "user", "content": results})
        final = _converse(client, stream, messages=messages, **request)
        body = {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 200,
            "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        }
        invoked = client.invoke_model(modelId=MODEL, body=json.dumps(body))["body"].read()
    return {"first": first, "final": final, "invoke": json.loads(invoked)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default="You answer weather questions.")
    args = parser.parse_args()
    print(json.dumps(run(args.stream, args.prompt), sort_keys=True), flush=True)
