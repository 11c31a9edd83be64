"""Model replay at botocore's transport: a boto3 Bedrock agent (Converse plain and streamed, and
``invoke_model``'s streamed body) recorded under the real ``opentelemetry-instrument`` against the
local server speaking Bedrock's JSON and event-stream framing, then replayed by the real
``otel-agent-trace replay --model-replay`` with that server stopped: the same answers, a changed
prompt reported as a divergence, another host refused and never sent to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import INSTRUMENT, clean_env
from tests.fakes.llm_server import FakeLLMServer

from .conftest import AGENTS, CLI, REPO, WEATHER, entries

AGENT = AGENTS / "bedrock_agent.py"
SECRET = "bedrock-Secret-0nly-9f8e7d"  # the AWS secret key: never in a session file
SCRIPTS = {
    False: ("bedrock_converse_tool_use", "bedrock_converse_final", "bedrock_invoke_anthropic_tool_use"),
    True: (
        "bedrock_converse_stream_tool_use",
        "bedrock_converse_stream_final",
        "bedrock_invoke_anthropic_tool_use",
    ),
}


def _env(cwd: Path, endpoint: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return clean_env(
        {
            "BEDROCK_ENDPOINT": endpoint,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "WEATHER_FILE": str(cwd / "weather.json"),
            "PYTHONPATH": str(REPO),
            **(extra or {}),
        }
    )


def _record(cwd: Path, stream: bool) -> tuple[Path, str, str, list[dict]]:
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "weather.json").write_text(json.dumps(WEATHER))
    args = ["--stream"] if stream else []
    with FakeLLMServer() as server:
        server.queue(*SCRIPTS[stream])
        done = subprocess.run(
            [INSTRUMENT, sys.executable, str(AGENT), *args],
            cwd=cwd,
            env=_env(cwd, server.base_url, {"AGENT_TRACE_TIER": "checkpoint"}),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        seen, base_url = list(server.requests), server.base_url
    assert len(seen) == 3
    (session,) = (cwd / "agent-sessions").glob("*.checkpoint.jsonl")
    return session, done.stdout.strip(), base_url, seen


def _replay(
    cwd: Path, session: Path, endpoint: str, *agent_args: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = cwd / f"report-{len(list(cwd.glob('report-*')))}.json"
    done = subprocess.run(
        [*CLI, "replay", str(session), "--model-replay", "--report", str(report), "--",
         sys.executable, str(AGENT), *agent_args],
        cwd=cwd,
        env=_env(cwd, endpoint),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    return done, json.loads(report.read_text()) if report.exists() else {}


@pytest.fixture(scope="module", params=[False, True], ids=["converse", "converse_stream"])
def recorded(request, tmp_path_factory):
    stream = request.param
    cwd = tmp_path_factory.mktemp("bedrock-stream" if stream else "bedrock")
    return (cwd, stream, *_record(cwd, stream))


def test_exchanges_are_kept_as_the_server_sent_them(recorded):
    cwd, stream, session, output, base_url, seen = recorded
    kept = [
        x for e in entries(session) if e["type"] == "span.end"
        for x in (e.get("content") or {}).get("http_exchanges", [])
    ]  # fmt: skip
    assert [x["request"]["url"].split("/")[-1] for x in kept] == (
        ["converse-stream", "converse-stream", "invoke"] if stream else ["converse", "converse", "invoke"]
    )
    # the request bodies are those the server received; no credential is kept
    assert [json.loads(x["request"]["body"]) for x in kept] == [r["body"] for r in seen]
    assert all(x["response"]["complete"] and not x["response"]["truncated"] for x in kept)
    names = {h[0].lower() for x in kept for h in x["request"]["headers"]}
    assert "authorization" not in names and "x-amz-date" in names
    assert SECRET not in session.read_text() and "AKIDEXAMPLE" not in session.read_text()
    # kept under the model spans that made them
    holders = [
        e["name"] for e in entries(session)
        if e["type"] == "span.end" and (e.get("content") or {}).get("http_exchanges")
    ]  # fmt: skip
    assert holders and all(name.startswith("chat ") for name in holders)


def test_replayed_with_the_server_stopped_gives_the_same_answers(recorded):
    cwd, stream, session, output, base_url, _seen = recorded
    done, report = _replay(cwd, session, base_url, *(["--stream"] if stream else []))
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("{"))
    assert line == output
    assert report["answered"] == 3 and report["unused"] == 0 and report["divergences"] == []
    assert report["refused"] == []


def test_a_changed_prompt_is_a_divergence_with_its_diff(recorded):
    cwd, stream, session, output, base_url, _seen = recorded
    args = [*(["--stream"] if stream else []), "--prompt", "You answer weather questions in French."]
    done, report = _replay(cwd, session, base_url, *args)
    assert done.returncode == 1
    assert "ModelReplayDivergence" in done.stderr
    (divergence,) = report["divergences"]
    assert divergence["call"] == 1 and divergence["recorded_index"] == 1
    assert divergence["span_name"].startswith("chat us.anthropic")
    assert any(d.startswith("body.system[0].text: recorded") for d in divergence["differences"])


def test_another_host_is_refused_and_never_sent(recorded):
    cwd, stream, session, output, _base_url, _seen = recorded
    args = ["--stream"] if stream else []
    done, report = _replay(cwd, session, "https://bedrock-runtime.us-east-1.amazonaws.com", *args)
    assert done.returncode == 1
    assert "ModelReplayRefused" in done.stderr and "never talked to" in done.stderr
    assert report["refused"] == [
        "POST https://bedrock-runtime.us-east-1.amazonaws.com/model/"
        "us.anthropic.claude-3-5-haiku-20241022-v1%3A0/" + ("converse-stream" if stream else "converse")
    ]


def test_the_agent_reads_the_same_bytes_without_us(recorded):
    """The exchange is teed at the transport (a streamed body read through our proxy): what the
    agent parsed under ``opentelemetry-instrument`` is what it parses with nothing installed."""
    cwd, stream, _session, output, _base_url, seen = recorded
    with FakeLLMServer() as server:
        server.queue(*SCRIPTS[stream])
        done = subprocess.run(
            [sys.executable, str(AGENT), *(["--stream"] if stream else [])],
            cwd=cwd,
            env=_env(cwd, server.base_url),
            capture_output=True,
            text=True,
            timeout=120,
        )
        plain = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == output
    assert [r["body"] for r in plain] == [r["body"] for r in seen]


def test_then_live_sends_the_diverging_request_and_the_rest_to_the_live_endpoint(recorded):
    """``--then-live URL``: from the first divergence on, botocore's requests go to ``URL`` (path
    and body kept), and the agent finishes against it."""
    cwd, stream, session, output, base_url, _seen = recorded
    args = [*(["--stream"] if stream else []), "--prompt", "You answer weather questions in French."]
    report = cwd / "report-live.json"
    with FakeLLMServer() as live:
        live.queue(*SCRIPTS[stream])
        done = subprocess.run(
            [*CLI, "replay", str(session), "--model-replay", "--report", str(report), "--then-live",
             live.base_url, "--", sys.executable, str(AGENT), *args],
            cwd=cwd, env=_env(cwd, base_url), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        sent = list(live.requests)
    assert done.returncode == 1, done.stderr  # (a divergence was reported)
    assert [r["path"].rsplit("/", 1)[-1] for r in sent] == (
        ["converse-stream", "converse-stream", "invoke"] if stream else ["converse", "converse", "invoke"]
    )
    assert sent[0]["body"]["system"] == [{"text": "You answer weather questions in French."}]
    data = json.loads(report.read_text())
    assert data["live"] is True and [c["status"] for c in data["calls"]] == ["live"] * 3
    assert next(x for x in done.stdout.splitlines() if x.startswith("{")) == output
