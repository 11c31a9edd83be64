"""The ``otel-agent-trace`` command on real session files: list, view, and errors a user reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import otel_agent_trace as oat

CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


_CHILD = """
import otel_agent_trace as oat
with oat.session():
    with oat.tool("child work"):
        pass
"""


def _session_with_child(directory: Path) -> tuple[str, list[str]]:
    """A parent session whose tool span started a child Python process that joined the session
    (the environment a child gets from the context instrumentation, given here by hand)."""
    s = oat.session(directory=directory).start()
    with oat.tool("spawn") as call:
        env = {
            **os.environ,
            "AGENT_TRACE_DIR": str(directory),
            "AGENT_TRACE_SESSION_ID": str(s.session_id),
            "AGENT_TRACE_PARENT_SPAN": f"{call.span.get_span_context().span_id:016x}",
        }
        subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True, timeout=60)
    return str(s.session_id), s.stop()


def test_list_shows_each_session_once_with_its_child_files(provider, tmp_path):
    session_id, _ = _session_with_child(tmp_path)
    done = _cli("list", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{session_id}  ")
    assert "  trace  " in lines[0] and "complete" in lines[0]
    assert lines[0].endswith("zip +1 child file")


def test_view_hangs_a_child_process_under_the_span_that_started_it(provider, tmp_path):
    _, zips = _session_with_child(tmp_path)
    done = _cli("view", zips[0])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    tool = next(line for line in lines if "execute_tool spawn [tool]" in line)
    join = next(line for line in lines if "session.join" in line)

    def indent(line: str) -> int:
        text = line.split("  ", 1)[1]
        return len(text) - len(text.lstrip(" "))

    assert indent(join) == indent(tool) + 2


def test_a_bad_line_is_reported_with_file_and_line_and_the_rest_still_shown(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a-0000", "parent_id": "", "type": "session.start", "layer": "agent", "ts": 1}\nnot json\n'
        '{"id": "a-0001", "parent_id": "a-0000", "type": "span.start", "layer": "agent", "ts": 2, '
        '"name": "after", "span_id": "00000000000000aa"}\n'
    )
    done = _cli("view", str(bad))
    assert done.returncode == 1
    assert f"{bad}:2: not JSON" in done.stderr
    assert "a-0001" in done.stdout and "after" in done.stdout


def test_a_torn_last_line_is_a_warning_not_a_failure(tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_text(
        '{"id": "a-0000", "parent_id": "", "type": "session.start", "layer": "agent", "ts": 1}\n{"id": "a-00'
    )
    done = _cli("view", str(torn))
    assert done.returncode == 0
    assert f"{torn}:2: torn last line" in done.stderr


def test_a_missing_file_is_an_error(tmp_path):
    missing = _cli("view", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no such session file" in missing.stderr
