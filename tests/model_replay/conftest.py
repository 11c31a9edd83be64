"""Real example agents (``examples/model_replay/``) recorded in the checkpoint tier under the real
``opentelemetry-instrument`` against the local fake model server, then replayed by the real
``otel-agent-trace replay --model-replay`` with that server stopped."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.helpers import INSTRUMENT, clean_env
from tests.fakes.llm_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "model_replay"
AGENTS = Path(__file__).resolve().parent / "agents"
CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]
API_KEY = "sk-test-Replay0nly9f8e7d6c5b4a"  # must never reach a session file
WEATHER = {"Paris": {"temp_c": 18, "sky": "sunny"}}
SCRIPTS = {
    ("openai", False): ("openai_chat_tool_call", "openai_chat_final"),
    ("openai", True): ("openai_chat_tool_call_stream", "openai_chat_final_stream"),
    ("anthropic", False): ("anthropic_messages_tool_use", "anthropic_messages_final"),
    ("anthropic", True): ("anthropic_messages_tool_use_stream", "anthropic_messages_final_stream"),
    ("responses", False): ("openai_responses_tool_call", "openai_responses_final"),
    ("responses", True): ("openai_responses_tool_call_stream", "openai_responses_final_stream"),
}


@dataclass
class Recorded:
    cwd: Path
    session: Path  # the checkpoint-tier .jsonl
    output: str  # the agent's stdout (one JSON line)
    base_url: str  # where the (now stopped) model server was (scheme, host and port)
    script: Path
    args: tuple[str, ...]
    provider: str = "openai"  # the API the fake server spoke (a key of SCRIPTS with the stream flag)


def agent_env(cwd: Path, base_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "ANTHROPIC_BASE_URL": base_url,
        "OPENAI_API_KEY": API_KEY,
        "ANTHROPIC_API_KEY": API_KEY,
        "WEATHER_FILE": str(cwd / "weather.json"),
        "PYTHONPATH": str(REPO),
        **(extra or {}),
    }


def record(
    script: Path,
    cwd: Path,
    *args: str,
    stream: bool = False,
    tier: str = "checkpoint",
    provider: str = "openai",
) -> Recorded:
    """Run ``script`` under ``opentelemetry-instrument`` against a fake server that answers a
    tool call then an answer (``provider``'s API); the server is stopped when this returns."""
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "weather.json").write_text(json.dumps(WEATHER))
    with FakeLLMServer() as server:
        server.queue(*SCRIPTS[provider, stream])
        base_url = server.base_url
        done = subprocess.run(
            [INSTRUMENT, sys.executable, str(script), *args],
            cwd=cwd,
            env=clean_env(agent_env(cwd, base_url, {"AGENT_TRACE_TIER": tier})),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert len(server.requests) == 2, done.stderr
    assert done.returncode == 0, done.stderr
    suffix = ".checkpoint.jsonl" if tier != "trace" else ".jsonl"
    (session,) = (
        p
        for p in (cwd / "agent-sessions").glob(f"*{suffix}")
        if tier != "trace" or ".checkpoint" not in p.name
    )
    return Recorded(cwd, session, done.stdout.strip(), base_url, script, args, provider)


def replay(
    rec: Recorded,
    *options: str,
    agent_args: tuple[str, ...] | None = None,
    base_url: str | None = None,
    env: dict[str, str] | None = None,
    session: Path | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """``otel-agent-trace replay SESSION --model-replay OPTIONS -- python SCRIPT ARGS``; the
    completed process and the replay report."""
    report = rec.cwd / f"report-{len(list(rec.cwd.glob('report-*')))}.json"
    args = rec.args if agent_args is None else agent_args
    done = subprocess.run(
        [*CLI, "replay", str(session or rec.session), "--model-replay", "--report", str(report),
         *options, "--", sys.executable, str(rec.script), *args],
        cwd=rec.cwd,
        env=clean_env(agent_env(rec.cwd, base_url or rec.base_url, env)),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    data = json.loads(report.read_text()) if report.exists() else {}
    return done, data


def agent_output(done: subprocess.CompletedProcess[str]) -> str:
    """The agent's JSON line in the replay's stdout (the CLI's summary follows it)."""
    return next(line for line in done.stdout.splitlines() if line.startswith("{"))


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
