"""Recording sessions for export tests (real subprocesses) and running the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from otel_agent_trace import session_format as fmt

AGENT = Path(__file__).resolve().parent / "agents" / "recorded_agent.py"
CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env.pop("PYTHONPATH", None)
    return env


def record(directory: Path, mode: str = "finish") -> Path:
    """Run the recording agent; returns its trace-tier JSONL (child files and ZIP beside it)."""
    directory.mkdir(parents=True, exist_ok=True)
    before = set(directory.iterdir())
    done = subprocess.run(
        [sys.executable, str(AGENT), str(directory), mode],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == (0 if mode == "finish" else 9), done.stderr
    (path,) = [
        p
        for p in set(directory.glob(f"session-*{fmt.JSONL_SUFFIX}")) - before
        if ".p" not in p.name and fmt.CHECKPOINT_SUFFIX not in p.name
    ]
    return path


def cli(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with no OTEL_* of ours but those of ``env``."""
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, env={**_env(), **(env or {})}
    )
