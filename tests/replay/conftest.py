"""Recordings of real example agents (``examples/replay/``), made once per test module under the
real ``opentelemetry-instrument`` in both tiers: the scripted notes agent (``@oat.tool`` tools),
a Strands agent and a LangGraph graph on their OpenAI clients against the local fake server."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.helpers import clean_env, run_instrumented
from tests.fakes.llm_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "replay"
CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]


@dataclass
class Recording:
    """One recorded run: its directory, both tier files and the ZIPs."""

    cwd: Path
    trace: Path
    checkpoint: Path
    trace_zip: Path
    checkpoint_zip: Path


def record(script: str, cwd: Path, env: dict[str, str] | None = None) -> Recording:
    """Run ``examples/replay/<script>`` recorded in both tiers, from a copy in ``cwd``."""
    cwd.mkdir(parents=True, exist_ok=True)
    for name in ("notes_tools.py", script):
        shutil.copy(EXAMPLES / name, cwd / name)
    done = run_instrumented(cwd / script, cwd, {"AGENT_TRACE_TIER": "both", **(env or {})})
    assert done.returncode == 0, done.stderr
    sessions = cwd / "agent-sessions"
    (checkpoint,) = sessions.glob("*.checkpoint.jsonl")
    (trace,) = (p for p in sessions.glob("*.jsonl") if ".checkpoint" not in p.name)
    return Recording(
        cwd,
        trace,
        checkpoint,
        trace.with_suffix(".zip"),
        checkpoint.with_name(checkpoint.name.replace(".jsonl", ".zip")),
    )


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``otel-agent-trace ARGS`` in ``cwd`` (the directory is importable, as ``python -m`` makes it)."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=clean_env({"PYTHONPATH": str(REPO), **(env or {})}),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="package")
def llm() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """The scripted notes agent: write, read, count, a child process, a failing division."""
    return record("scripted_agent.py", tmp_path_factory.mktemp("notes"))


@pytest.fixture(scope="package")
def strands_run(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLMServer) -> Recording:
    llm.reset()
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    return record("strands_agent.py", tmp_path_factory.mktemp("strands"), {"OPENAI_BASE_URL": llm.openai_url})


@pytest.fixture(scope="package")
def langgraph_run(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLMServer) -> Recording:
    llm.reset()
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    return record(
        "langgraph_agent.py", tmp_path_factory.mktemp("langgraph"), {"OPENAI_BASE_URL": llm.openai_url}
    )
