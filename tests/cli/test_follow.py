"""``view --follow`` on a session a real writer process is still appending to."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

from .helpers import CLI, RAW_CONTROLS

WRITER = Path(__file__).parent / "agents" / "live_writer.py"


def _reader(stream) -> queue.Queue[str | None]:
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str | None], text: str, seen: list[str]) -> str:
    while True:
        line = lines.get(timeout=60)  # a generous bound, not a timing assertion
        assert line is not None, f"output ended before {text!r}: {seen}"
        seen.append(line)
        if text in line:
            return line


def test_follow_prints_a_live_session_as_it_is_written_and_stops_at_its_end(tmp_path):
    go = tmp_path / "go"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(tmp_path / "sessions"), str(go)], stdout=subprocess.PIPE, text=True
    )
    viewer = None
    try:
        session_file = writer.stdout.readline().strip()
        viewer = subprocess.Popen([*CLI, "view", "--follow", session_file], stdout=subprocess.PIPE, text=True)
        lines = _reader(viewer.stdout)
        seen: list[str] = []
        first = _until(lines, "execute_tool first", seen)
        assert 'args={"step":1} → one' in first
        # shown while the writer still runs: the agent span is open, printed as such
        assert writer.poll() is None
        agent = next(line for line in seen if "invoke_agent watcher" in line)
        assert agent.endswith("…")
        go.touch()
        second = _until(lines, "execute_tool second", seen)
        assert "→ two" in second
        closing = _until(lines, "└ end invoke_agent watcher", seen)
        assert closing.split("  ", 1)[0] == agent.split("  ", 1)[0]  # the same span's id
        _until(lines, "session.end", seen)
        assert viewer.wait(timeout=60) == 0  # stops by itself at session.end
        assert writer.wait(timeout=60) == 0
        assert not any(raw in line for line in seen for raw in RAW_CONTROLS)
    finally:
        go.touch()
        for proc in (viewer, writer):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_follow_with_json_prints_every_entry_and_stops_at_the_end(demo_jsonl):
    done = subprocess.run(
        [*CLI, "view", "--follow", "--json", str(demo_jsonl)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    viewed = subprocess.run(
        [*CLI, "view", "--json", str(demo_jsonl)], capture_output=True, text=True, timeout=60
    )
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        json.loads(line) for line in viewed.stdout.splitlines()
    ]  # the entries view reads (a compact file's upgraded), one for each line of the file
    assert len(done.stdout.splitlines()) == len(demo_jsonl.read_text().splitlines())


def test_follow_of_a_finished_file_prints_what_view_prints(demo_jsonl):
    """The same lines (tokens, finish reasons, the tools a model asked for, a snapshot's
    description): a compact file read by follow is upgraded as view's reader upgrades it."""
    followed = subprocess.run(
        [*CLI, "view", "--follow", str(demo_jsonl)], capture_output=True, text=True, timeout=60
    )
    viewed = subprocess.run([*CLI, "view", str(demo_jsonl)], capture_output=True, text=True, timeout=60)
    assert followed.returncode == viewed.returncode == 0, followed.stderr + viewed.stderr
    assert "tokens " in viewed.stdout and "asks " in viewed.stdout and "after chat" in viewed.stdout
    assert followed.stdout.splitlines() == viewed.stdout.splitlines()
