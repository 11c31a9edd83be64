"""``model_replay(session)`` in the agent's own process: the agent's code runs again with its
model calls answered from the recording; the block's end gives the network back."""

from __future__ import annotations

import importlib.util
import json

import pytest

from otel_agent_trace._internal import replay
from otel_agent_trace.model_replay import ModelReplayDivergence, RecordingError, model_replay

from .conftest import EXAMPLES, record


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return record(EXAMPLES / "openai_weather.py", tmp_path_factory.mktemp("api"))


@pytest.fixture
def agent(recorded, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"{recorded.base_url}/v1")
    monkeypatch.setenv("WEATHER_FILE", str(recorded.cwd / "weather.json"))
    spec = importlib.util.spec_from_file_location("openai_weather_example", EXAMPLES / "openai_weather.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_block_answers_from_the_recording(recorded, agent):
    with model_replay(recorded.session) as player:
        out = agent.run("What is the weather in Paris?", agent.SYSTEM_PROMPT, False)
    assert json.dumps(out) == recorded.output
    report = player.report()
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    assert replay.player is None  # the network again after the block


def test_the_package_itself_is_the_block(recorded, agent):
    import otel_agent_trace as oat

    with oat.model_replay(recorded.session) as player:
        out = agent.run("What is the weather in Paris?", agent.SYSTEM_PROMPT, False)
    assert json.dumps(out) == recorded.output and player.report()["answered"] == 2


def test_stop_raises_at_the_first_divergence_with_the_report(recorded, agent):
    with pytest.raises(ModelReplayDivergence) as caught, model_replay(recorded.session):
        agent.run("What is the weather in Lyon?", agent.SYSTEM_PROMPT, False)
    text = str(caught.value)
    assert "call 1" in text and "recorded exchange 1" in text
    paris, lyon = '"What is the weather in Paris?"', '"What is the weather in Lyon?"'
    assert f"body.messages[1].content: recorded {paris}, now {lyon}" in text


def test_a_file_that_is_not_a_session_is_an_error_before_anything_changes(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"type": "span.end"}\n')
    with pytest.raises((RecordingError, ValueError)), model_replay(bad):
        pass
    assert replay.player is None


def test_a_replay_asked_by_environment_runs_no_tool_by_default():
    """``AGENT_TRACE_MODEL_REPLAY`` without ``AGENT_TRACE_MODEL_REPLAY_TOOLS``: the tools are
    answered from the recording (a recording may be anyone's); ``live`` only when asked."""
    from otel_agent_trace.settings import Settings

    env = {"AGENT_TRACE_MODEL_REPLAY": "s.checkpoint.jsonl"}
    assert Settings.from_env(env).model_replay_tools == "recorded"
    assert Settings().model_replay_tools == "recorded"
    env["AGENT_TRACE_MODEL_REPLAY_TOOLS"] = "live"
    assert Settings.from_env(env).model_replay_tools == "live"
