"""At exit a recorded run names its session file and the next command, on stderr, when a person
is watching (stderr is a terminal) or when asked (``AGENT_TRACE_SUMMARY=true``); never in a pipe
by default (a script reading the agent's stderr gets nothing of ours), never when switched off."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from .helpers import DEMO_AGENT, INSTRUMENT, clean_env, run_instrumented

AGENT = "import otel_agent_trace as oat\n\n@oat.tool\ndef add(a, b):\n    return a + b\n\nprint(add(2, 3))\n"


def _line(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith("otel-agent-trace: session recorded")]
    return line


def _recorded(cwd: Path) -> Path:
    (path,) = (cwd / "agent-sessions").glob("*.jsonl")
    return path


def test_the_demo_says_where_its_session_is_when_asked(tmp_path: Path) -> None:
    done = run_instrumented(DEMO_AGENT, tmp_path, {"AGENT_TRACE_SUMMARY": "true"})
    assert done.returncode == 0, done.stderr
    line = _line(done.stderr)
    relative = _recorded(tmp_path).relative_to(tmp_path)
    assert f"session recorded in {relative};" in line
    assert line.endswith(f"otel-agent-trace view {relative}")


def test_nothing_is_said_in_a_pipe_or_when_switched_off(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    for env in ({}, {"AGENT_TRACE_SUMMARY": "false"}):
        done = run_instrumented(tmp_path / "agent.py", tmp_path, env)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_terminal_is_told_by_default(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [INSTRUMENT, sys.executable, str(tmp_path / "agent.py")],
            cwd=tmp_path,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the terminal closed: all read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    line = _line(b"".join(chunks).decode())
    assert str(_recorded(tmp_path).relative_to(tmp_path)) in line
