"""Model replay at requests' transport (``HTTPAdapter.send``): an agent that calls a
chat-completions endpoint with ``requests`` itself (plain JSON, then an SSE stream read line by
line) is recorded, then run again with the server stopped and answered from the recording; a
changed request is a divergence with its diff, another host is refused and never sent."""

from __future__ import annotations

import json

import pytest
import requests

import otel_agent_trace as oat
from otel_agent_trace.model_replay import ModelReplayDivergence, ModelReplayRefused, model_replay
from tests.genai.replay_helpers import exchange_holders, exchanges_kept, record_then_replay

PROMPT = "What's the weather in Paris?"


def _agent(base_url: str, prompt: str = PROMPT) -> list[object]:
    url = f"{base_url}/v1/chat/completions"
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}
    with oat.agent("requests-agent"), requests.Session() as http:
        first = http.post(url, json=body, headers={"Authorization": "Bearer sk-requests-secret"}, timeout=10)
        first.raise_for_status()
        with http.post(url, json={**body, "stream": True}, stream=True, timeout=10) as streamed:
            lines = [line for line in streamed.iter_lines() if line]
    return [first.json()["choices"][0]["message"], first.headers["content-type"], lines]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, provider):  # (the tests' tracer provider, set before any session)
    directory = tmp_path_factory.mktemp("requests")
    out, again, report, path = record_then_replay(
        directory, ("openai_chat_text", "openai_chat_text_stream"), _agent
    )
    return out, again, report, path


def test_answered_from_the_recording_with_the_server_stopped(recorded):
    out, again, report, path = recorded
    assert again == out and len(out[2]) > 2 and out[2][-1] == b"data: [DONE]"
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    assert exchange_holders(path) == ["invoke_agent requests-agent"]  # (no model span: the agent's)
    text = path.read_text()
    assert "sk-requests-secret" not in text  # the Authorization header is never kept


def test_a_changed_request_is_a_divergence(recorded):
    _out, _again, _report, path = recorded
    with exchanges_kept(), pytest.raises(ModelReplayDivergence) as caught, model_replay(path):
        _agent("http://127.0.0.1:9", prompt="What's the weather in Lyon?")
    assert 'body.messages[0].content: recorded "What\'s the weather in Paris?"' in str(caught.value)


def test_another_host_is_refused(recorded):
    _out, _again, _report, path = recorded
    with exchanges_kept(), model_replay(path) as player, pytest.raises(ModelReplayRefused):
        requests.post("https://api.example.com/v1/chat/completions", data=json.dumps({}), timeout=10)
    assert player.report()["refused"] == ["POST https://api.example.com/v1/chat/completions"]
