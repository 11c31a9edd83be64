"""``analyze-dir``: every recorded session of a directory (each counted once, child and
checkpoint files included in their session), in parallel, aggregated; a shareable Markdown
summary without prompts, outputs or arguments; a progress bar only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys

from otel_agent_trace.offline.analysis import analyze_dir, find_sessions
from tests.analysis.conftest import ANSWER, CALC_OK, TASK, cli


def _gather(recorded, target):
    """All recorded session files (JSONL, checkpoint, ZIP) copied into one directory."""
    target.mkdir()
    for path in recorded.values():
        for file in path.parent.iterdir():
            shutil.copy(file, target / file.name)
    return target


def test_one_row_per_session_and_totals(recorded, tmp_path):
    directory = _gather(recorded, tmp_path / "all")
    assert len(find_sessions(directory)) == len(recorded)  # not one per file
    summary = analyze_dir(directory, jobs=2)
    assert summary["sessions"] == len(recorded) and summary["unreadable"] == 0
    assert summary["status"] == {"failed": 1, "incomplete": 1, "ok": 4}
    assert summary["final_stage"] == {"limits": 1, "none": 3, "sys": 1, "verification": 1}
    assert summary["with_loops"] == 1 and summary["verification_gaps"] == 1
    assert summary["tools"]["read_file"]["calls"] == 1 + 4 + 2
    assert sum(summary["grades"].values()) == len(recorded)
    assert analyze_dir(directory, jobs=1) | {"rows": None} == summary | {"rows": None}


def test_markdown_has_no_content(recorded, tmp_path):
    directory = _gather(recorded, tmp_path / "all")
    out = tmp_path / "summary.md"
    done = cli("analyze-dir", str(directory), "--pattern", "*.checkpoint.jsonl", "--markdown", str(out))
    assert done.returncode == 0, done.stderr  # the one checkpoint session ended well
    assert "analyzing [" not in done.stderr  # not a terminal: no progress bar
    text = out.read_text()
    assert "sessions: 1 (1 analysed" in text and "read\\_file" in text
    for secret in (ANSWER, TASK, "missing.py", CALC_OK.splitlines()[0], "pytest -q", "FileNotFoundError"):
        assert secret not in text, secret
    # and the same session analysed alone shows them: they were there to leak
    alone = json.loads(cli("analyze", "--json", str(next(directory.glob("*.checkpoint.jsonl")))).stdout)
    assert alone["final_answer"]["text"] == ANSWER


def test_json_exit_code_and_bad_files(recorded, tmp_path):
    directory = _gather(recorded, tmp_path / "all")
    (directory / "garbage.jsonl").write_text("this is not json\n")
    (directory / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    done = cli("analyze-dir", "--json", "--jobs", "2", str(directory))
    assert done.returncode == 1  # a crash, a failed run, an unreadable file
    data = json.loads(done.stdout)
    assert data["sessions"] == len(recorded) + 1 and data["unreadable"] == 1
    (bad,) = [row for row in data["rows"] if "error" in row]
    assert bad["file"] == "garbage.jsonl" and "garbage.jsonl" in bad["error"]
    missing = cli("analyze-dir", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr


def test_recursive_and_pattern(recorded, tmp_path):
    root = tmp_path / "tree"
    for name, path in recorded.items():
        shutil.copytree(path.parent, root / "runs" / name)
    assert analyze_dir(root)["sessions"] == 0
    assert analyze_dir(root, recursive=True)["sessions"] == len(recorded)
    assert (
        analyze_dir(root, recursive=True, pattern="*.zip")["sessions"] == len(recorded) - 1
    )  # crash: no ZIP


def test_progress_bar_on_a_terminal(recorded, tmp_path):
    directory = _gather(recorded, tmp_path / "all")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent_trace.cli.main", "analyze-dir", str(directory)],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    stdout, _ = proc.communicate(timeout=300)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = b"".join(chunks).decode()
    assert f"{len(recorded)}/{len(recorded)}" in err and "analyzing [" in err
    assert b"analyzing" not in stdout
