"""Model replay at aiohttp's client (``ClientSession._request``): an agent that calls a
chat-completions endpoint with aiohttp itself (plain JSON, then an SSE stream read line by line)
is recorded, then run again with the server stopped and answered from the recording; a changed
request is a divergence with its diff, another host is refused and never sent."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

import otel_agent_trace as oat
from otel_agent_trace.model_replay import ModelReplayDivergence, ModelReplayRefused, model_replay
from tests.genai.genai_helpers import entries
from tests.genai.replay_helpers import exchange_holders, exchanges_kept, record_then_replay

PROMPT = "What's the weather in Paris?"


async def _calls(base_url: str, prompt: str) -> list[object]:
    url = f"{base_url}/v1/chat/completions"
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer sk-aiohttp-secret"}) as http:
        async with http.post(url, json=body) as first:
            answer = await first.json()
            kind = first.headers["content-type"]
        async with http.post(url, json={**body, "stream": True}, headers=[("x-agent-step", "2")]) as streamed:
            lines = [line async for line in streamed.content if line.strip()]
    return [answer["choices"][0]["message"], kind, lines]


def _agent(base_url: str, prompt: str = PROMPT) -> list[object]:
    with oat.agent("aiohttp-agent"):
        return asyncio.run(_calls(base_url, prompt))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, provider):  # (the tests' tracer provider, set before any session)
    return record_then_replay(
        tmp_path_factory.mktemp("aiohttp"), ("openai_chat_text", "openai_chat_text_stream"), _agent
    )


def test_answered_from_the_recording_with_the_server_stopped(recorded):
    out, again, report, path = recorded
    assert again == out and len(out[2]) > 2 and out[2][-1] == b"data: [DONE]\n"
    assert out[1].startswith("application/json")
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    assert exchange_holders(path) == ["invoke_agent aiohttp-agent"]
    assert "sk-aiohttp-secret" not in path.read_text()
    kept = [
        x for e in entries(path) if e["type"] == "span.end" for x in e["content"].get("http_exchanges", [])
    ]
    assert ["x-agent-step", "2"] in kept[1]["request"]["headers"]  # (headers given as pairs)
    assert ["content-type", "text/event-stream"] in [
        [k.lower(), v] for k, v in kept[1]["response"]["headers"]
    ]


def test_a_changed_request_is_a_divergence(recorded):
    _out, _again, _report, path = recorded
    with exchanges_kept(), pytest.raises(ModelReplayDivergence) as caught, model_replay(path):
        _agent("http://127.0.0.1:9", prompt="What's the weather in Lyon?")
    assert 'body.messages[0].content: recorded "What\'s the weather in Paris?"' in str(caught.value)


def test_another_host_is_refused(recorded):
    _out, _again, _report, path = recorded

    async def call() -> None:
        async with aiohttp.ClientSession() as http:
            await http.post("https://api.example.com/v1/chat/completions", json={})

    with exchanges_kept(), model_replay(path) as player, pytest.raises(ModelReplayRefused):
        asyncio.run(call())
    assert player.report()["refused"] == ["POST https://api.example.com/v1/chat/completions"]
