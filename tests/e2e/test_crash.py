"""A killed agent leaves a session that loads: SIGKILL at random points, SIGTERM, torn lines."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session

from .helpers import AGENTS, assert_one_tree, load, only_session, start_instrumented

LOOPER = AGENTS / "looping_agent.py"


def _start_and_wait_for_steps(cwd: Path, steps: int = 1):
    """Start the looping agent and wait until it has printed ``steps`` lines."""
    proc = start_instrumented(LOOPER, cwd)
    seen = []
    assert proc.stdout is not None
    while len(seen) < steps:
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=30)
            err = proc.stderr.read() if proc.stderr else ""
            pytest.fail(f"agent exited early ({proc.returncode}): {err}")
        seen.append(line)
    return proc


def _finished_steps(proc, already: int) -> int:
    """Steps the agent reported finished (its stdout up to the kill)."""
    out = proc.stdout.read() if proc.stdout else ""
    return already + sum(line.startswith("step ") for line in out.splitlines())


@pytest.mark.parametrize("run", range(5))
def test_sigkill_at_a_random_point_leaves_a_loadable_session(tmp_path, run):
    rng = random.Random(run)
    proc = _start_and_wait_for_steps(tmp_path)
    time.sleep(rng.uniform(0.0, 0.4))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    reported = _finished_steps(proc, 1)
    proc.stderr.close()

    path = only_session(tmp_path / "agent-sessions")
    session = load(path)
    assert not session.complete, "a killed process cannot have written session.end"
    assert_one_tree(session)
    spans = session.spans
    agent = next(s for s in spans if s.name == "invoke_agent looper")
    assert not agent.finished and agent.status == fmt.STATUS_UNFINISHED
    tools = [s for s in spans if s.name == "execute_tool work"]
    finished = [s for s in tools if s.finished]
    unfinished = [s for s in tools if not s.finished]
    # Every step the agent said it finished is on disk, complete; at most the one in flight is not.
    assert len(finished) >= reported
    assert len(unfinished) <= 1
    assert all(s.status != fmt.STATUS_UNFINISHED and s.end_ns >= s.start_ns for s in finished)
    assert all(s.parent_span_id == agent.span_id for s in tools)
    assert not list((tmp_path / "agent-sessions").glob("*.zip")), "no ZIP from a SIGKILL"
    assert not list((tmp_path / "agent-sessions").glob(".*.tmp"))


def _started(directory: Path, name: str) -> bool:
    """Whether a session file in ``directory`` holds the ``span.start`` entry of span ``name``."""
    for path in directory.glob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            if name.encode() in line and fmt.SPAN_START.encode() in line:
                entry = json.loads(line)
                if entry.get("type") == fmt.SPAN_START and entry.get("name") == name:
                    return True
    return False


def test_sigkill_of_a_hung_tool_shows_what_was_running(tmp_path):
    """The span a process hangs in is in the file once it is older than the flush window, though
    nothing else is written after it: the flusher thread puts it there."""
    proc = start_instrumented(AGENTS / "stuck_agent.py", tmp_path)
    assert proc.stdout is not None and proc.stdout.readline() == "stuck\n"
    # Nothing is written after the hanging span starts: its start reaches the file only through
    # the flusher thread (within AGENT_TRACE_FLUSH_MS); the process is killed once it has.
    deadline = time.monotonic() + 60
    while not _started(tmp_path / "agent-sessions", "execute_tool hang"):
        assert time.monotonic() < deadline, "the running span never reached the file"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    proc.stderr.close()  # type: ignore[union-attr]
    session = load(only_session(tmp_path / "agent-sessions"))
    assert_one_tree(session)
    by_name = {s.name: s for s in session.spans}
    agent, quick, hang = (
        by_name["invoke_agent stuck"],
        by_name["execute_tool quick"],
        by_name["execute_tool hang"],
    )
    assert quick.finished and not agent.finished and not hang.finished
    assert hang.status == fmt.STATUS_UNFINISHED and hang.parent_span_id == agent.span_id


def test_sigterm_writes_the_zip(tmp_path):
    proc = _start_and_wait_for_steps(tmp_path, steps=3)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGTERM, "the process still dies of SIGTERM"
    reported = _finished_steps(proc, 3)
    proc.stderr.close()

    directory = tmp_path / "agent-sessions"
    jsonl = only_session(directory)
    zip_path = only_session(directory, fmt.ZIP_SUFFIX)
    session = load(jsonl)
    assert session.complete
    assert_one_tree(session)
    end = session.events[-1]
    assert end.type == fmt.SESSION_END and end.data["unfinished_spans"] >= 1
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)
    zipped = load_session(zip_path)
    assert [e.id for e in zipped.events] == [e.id for e in session.events]
    work = [s for s in zipped.spans if s.name == "execute_tool work" and s.finished]
    assert len(work) >= reported


def test_sigterm_at_once_still_shows_the_span_that_was_running(tmp_path):
    """SIGTERM before the flush window has passed: stopping the session writes what is queued,
    so the hung tool is in the file and the ZIP, unfinished."""
    proc = start_instrumented(AGENTS / "stuck_agent.py", tmp_path)
    assert proc.stdout is not None and proc.stdout.readline() == "stuck\n"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()  # type: ignore[union-attr]
    directory = tmp_path / "agent-sessions"
    for path in (only_session(directory), only_session(directory, fmt.ZIP_SUFFIX)):
        session = load_session(path)
        assert session.complete
        hang = next(s for s in session.spans if s.name == "execute_tool hang")
        assert not hang.finished and hang.status == fmt.STATUS_UNFINISHED


@pytest.mark.parametrize("run", range(4))
def test_sigterm_while_the_recorder_is_writing_never_hangs(tmp_path, run):
    """Regression: SIGTERM's handler (which writes session.end and the ZIP) ran on the main thread
    while it held the writer's lock in the middle of an entry, and the process hung forever."""
    proc = start_instrumented(AGENTS / "tight_loop.py", tmp_path)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "running"
    time.sleep(random.Random(run).uniform(0.0, 0.3))
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the agent hung on SIGTERM")
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGTERM
    directory = tmp_path / "agent-sessions"
    session = load(only_session(directory))
    assert session.complete
    assert_one_tree(session)
    assert only_session(directory, fmt.ZIP_SUFFIX).exists()


def test_a_torn_last_line_is_tolerated_with_a_warning(tmp_path):
    proc = _start_and_wait_for_steps(tmp_path, steps=5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    proc.stderr.close()
    path = only_session(tmp_path / "agent-sessions")
    data = path.read_bytes()
    whole = load(path)
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_start + (len(data) - last_start) // 2])  # cut the last line in half

    with pytest.warns(UserWarning, match=r"torn last line"):
        torn = load_session(path)
    assert len(torn.events) == len(whole.events) - 1
    assert [i.line for i in torn.issues] == [len(whole.events)]
    assert str(path) in str(torn.issues[0])
    assert_one_tree(torn)


def test_a_big_session_zip_stores_its_events_and_loads(tmp_path):
    """A session over ``zip_container.STORE_ABOVE`` (the checkpoint tier of ~40 MB of messages) is
    written with its members stored (fast at exit), the small one deflated; both ZIPs load
    under the reader's caps (a stored member is not taken for a bomb) with the JSONL's entries."""
    from otel_agent_trace.recording.zip_container import STORE_ABOVE

    proc = start_instrumented(
        AGENTS / "signalled_agent.py", tmp_path, {"AGENT_TRACE_TIER": "both"}, "5000", "3"
    )
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    directory = tmp_path / "agent-sessions"
    stem = only_session(directory).name[: -len(fmt.JSONL_SUFFIX)]
    for name, stored in ((stem, False), (stem + fmt.CHECKPOINT_SUFFIX, True)):
        jsonl = directory / (name + fmt.JSONL_SUFFIX)
        assert (jsonl.stat().st_size > STORE_ABOVE) == stored
        zip_path = directory / (name + fmt.ZIP_SUFFIX)
        with zipfile.ZipFile(zip_path) as zf:
            assert zf.testzip() is None
            for info in zf.infolist():
                assert info.compress_type == (zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED), name
            assert zf.getinfo(fmt.ZIP_EVENTS).file_size == jsonl.stat().st_size
        session = load(jsonl)
        zipped = load_session(zip_path)
        assert zipped.complete and [e.id for e in zipped.events] == [e.id for e in session.events]
        assert zipped.snapshots == session.snapshots
