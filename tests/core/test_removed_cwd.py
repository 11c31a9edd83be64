"""A process whose working directory was removed before it starts recording: the session is
recorded all the same (its root entry's ``cwd`` unknown, ``null``), nothing is raised into the
agent, and the CLI reads it back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import cli
from tests.e2e.helpers import clean_env

_AGENT = """
import os, sys
os.rmdir(os.getcwd())  # the directory the process is in, removed before the session starts
import otel_agent_trace as oat
with oat.session("removed-cwd", directory=sys.argv[1]) as s:
    oat.snapshot("one", messages=[{"role": "user", "content": "hi"}])
    print(s.session_id)
"""


def test_a_session_started_in_a_removed_directory_is_recorded(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "agent.py"
    script.write_text(_AGENT)
    sessions = tmp_path / "sessions"
    done = subprocess.run(
        [sys.executable, str(script), str(sessions)],
        cwd=work,
        env=clean_env({"AGENT_TRACE_INTERNAL_ERRORS": "raise"}),  # an error of ours fails the run
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not work.exists()
    session_id = done.stdout.strip()
    (path,) = [p for p in sessions.glob("*.jsonl") if session_id in p.name]
    root = json.loads(path.read_text().splitlines()[0])
    assert root["type"] == "session.start"
    assert root["metadata"]["cwd"] is None
    assert root["metadata"]["pid"] > 0  # the rest of the facts are there
    lines = cli("view", str(path)).stdout.splitlines()
    assert any("snapshot" in line for line in lines)
