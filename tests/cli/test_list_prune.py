"""``otel-agent-trace list`` and ``prune`` on real session directories, hostile ones included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import otel_agent_trace as oat
from otel_agent_trace.settings import Settings

from .helpers import cli

_CHILD = """
import otel_agent_trace as oat
with oat.session():
    with oat.tool("child work"):
        pass
"""


def _session_with_child(directory: Path) -> str:
    """Both tiers of a session whose tool started a child Python process that joined it."""
    s = oat.session(
        directory=directory, settings=Settings(directory=directory, tiers=("trace", "checkpoint"))
    )
    s.start()
    with oat.tool("spawn") as call:
        env = {
            **os.environ,
            "AGENT_TRACE_DIR": str(directory),
            "AGENT_TRACE_TIER": "both",
            "AGENT_TRACE_SESSION_ID": str(s.session_id),
            "AGENT_TRACE_PARENT_SPAN": f"{call.span.get_span_context().span_id:016x}",
        }
        subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True, timeout=60)
    s.stop()
    return str(s.session_id)


def test_one_row_per_session_whatever_its_files(provider, tmp_path, demo_dir):
    session_id = _session_with_child(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 6, names  # two tiers x (file, child file, zip)
    for path in demo_dir.iterdir():
        shutil.copy2(path, tmp_path)
    done = cli("list", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    row = next(line for line in lines if line.startswith(session_id))
    assert "checkpoint,trace" in row and "complete" in row and "2 zips" in row and "+2 child files" in row
    listed = json.loads(cli("list", "--json", str(tmp_path)).stdout)  # one document
    assert listed["directory"] == str(tmp_path)
    (entry,) = [item for item in listed["sessions"] if item["session_id"] == session_id]
    assert entry["child_files"] == 2 and entry["zips"] == 2 and sorted(entry["files"]) == names


def test_dangling_symlinks_fifos_and_foreign_files_do_not_stop_the_listing(tmp_path, demo_dir):
    for path in demo_dir.iterdir():
        shutil.copy2(path, tmp_path)
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "notes.jsonl").write_text("not a session\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "sub.jsonl").mkdir()
    done = cli("list", str(tmp_path), timeout=30)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1 and "complete" in done.stdout


def test_a_directory_of_zips_only_is_listed(tmp_path, demo_zip):
    shutil.copy2(demo_zip, tmp_path)
    done = cli("list", str(tmp_path))
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    assert line.startswith(demo_zip.stem) and "complete" in line and "zip" in line


def test_no_sessions_and_no_directory(tmp_path):
    done = cli("list", str(tmp_path))
    assert done.returncode == 0 and done.stdout.startswith("no sessions in")
    done = cli("list", str(tmp_path / "missing"))
    assert done.returncode == 2 and f"{tmp_path / 'missing'}: no such directory" in done.stderr
    done = cli("prune", str(tmp_path / "missing"), "--older-than", "1d")
    assert done.returncode == 2 and "no such directory" in done.stderr


def _age(directory: Path, days: float) -> None:
    then = time.time() - days * 86400
    for path in directory.iterdir():
        if path.is_file() and not path.is_symlink():
            os.utime(path, (then, then))


def test_prune_deletes_only_old_session_files_inside_the_directory(tmp_path, demo_dir, hostile_dir):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for path in demo_dir.iterdir():
        shutil.copy2(path, sessions)
    _age(sessions, 10)
    old = sorted(p.name for p in sessions.iterdir())
    for path in hostile_dir.iterdir():  # recent: kept
        shutil.copy2(path, sessions)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    precious = outside / "session-20200101-000000-00000000.jsonl"
    shutil.copy2(next(demo_dir.glob("*.jsonl")), precious)
    os.utime(precious, (0, 0))
    (sessions / "link.jsonl").symlink_to(precious)
    (sessions / "notes.txt").write_text("mine")
    (sessions / "old-notes.jsonl").write_text("not a session\n")
    _age(sessions, 30)  # everything old now, but only the demo's files are sessions ...
    for path in hostile_dir.iterdir():  # ... and the hostile session is written again, recent
        shutil.copy2(path, sessions)
        os.utime(sessions / path.name, None)
    before = sorted(p.name for p in sessions.iterdir())

    dry = cli("prune", str(sessions), "--older-than", "7d", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would delete") and all(name in dry.stdout for name in old)
    assert sorted(p.name for p in sessions.iterdir()) == before

    done = cli("prune", str(sessions), "--older-than", "7d")
    assert done.returncode == 0, done.stderr
    left = sorted(p.name for p in sessions.iterdir())
    assert left == sorted(set(before) - set(old))
    assert precious.exists() and (sessions / "link.jsonl").is_symlink()
    assert (sessions / "notes.txt").exists() and (sessions / "old-notes.jsonl").exists()
    assert "\x1b" not in done.stdout

    again = cli("prune", str(sessions), "--older-than", "7d")
    assert again.returncode == 0 and again.stdout.startswith("no sessions older than 7d")


def test_prune_needs_a_duration_it_understands(tmp_path):
    done = cli("prune", str(tmp_path), "--older-than", "soon")
    assert done.returncode == 2 and "expected a number and a unit" in done.stderr
