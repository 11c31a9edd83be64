"""Sessions recorded for real, once per test run: the demo agent (the real ``openai`` client against
its demo model server) and the hostile agent (control sequences and markup in recorded values),
both under ``opentelemetry-instrument`` in a scratch directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).parent / "agents"


def _record(script: Path, workdir: Path, **env: str) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    clean_env["AGENT_TRACE_INTERNAL_ERRORS"] = "raise"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "opentelemetry-instrument"), sys.executable, str(script)],
        cwd=workdir,
        env={**clean_env, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return workdir / "agent-sessions"


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``agent-sessions/`` of one run of ``examples/demo_agent.py``."""
    work = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "examples", work / "examples")
    return _record(work / "examples" / "demo_agent.py", work)


@pytest.fixture(scope="session")
def demo_jsonl(demo_dir: Path) -> Path:
    (path,) = demo_dir.glob("session-*.jsonl")
    return path


@pytest.fixture(scope="session")
def demo_zip(demo_dir: Path) -> Path:
    (path,) = demo_dir.glob("session-*.zip")
    return path


@pytest.fixture(scope="session")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``agent-sessions/`` of the hostile agent, both tiers."""
    return _record(AGENTS / "hostile_agent.py", tmp_path_factory.mktemp("hostile"), AGENT_TRACE_TIER="both")


@pytest.fixture(scope="session")
def hostile_jsonl(hostile_dir: Path) -> Path:
    (path,) = [p for p in hostile_dir.glob("session-*.jsonl") if ".checkpoint." not in p.name]
    return path


@pytest.fixture(scope="session")
def demo_both_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``agent-sessions/`` of one run of the demo agent recorded in both tiers."""
    work = tmp_path_factory.mktemp("demo-both")
    shutil.copytree(REPO / "examples", work / "examples")
    return _record(work / "examples" / "demo_agent.py", work, AGENT_TRACE_TIER="both")


@pytest.fixture(scope="session")
def variant_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``agent-sessions/`` of the demo agent run with another script (``demo_variant_agent.py``):
    other tool calls, a failing command, a tool that raises; both tiers."""
    work = tmp_path_factory.mktemp("variant")
    shutil.copytree(REPO / "examples", work / "examples")
    return _record(AGENTS / "demo_variant_agent.py", work, AGENT_TRACE_TIER="both")
