"""A session past 32 MB, recorded by ``opentelemetry-instrument``: its ZIP is copied while it runs,
so SIGTERM's stop writes the ZIP from what is left; SIGKILL leaves the copy behind, and ``prune``
deletes it with its session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session

from .helpers import AGENTS, assert_one_tree, only_session, start_instrumented

BIG = AGENTS / "big_agent.py"
MB = "40"  # past the 32 MB from which the copy runs


def _big(cwd: Path) -> tuple[subprocess.Popen[str], Path, os.stat_result]:
    """The big agent, once its session is past ``MB`` and the copy of its ZIP has caught up
    with most of it: (process, session file, the copy's stat)."""
    proc = start_instrumented(BIG, cwd, None, MB)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line != "big\n":
        proc.kill()
        raise AssertionError(f"the agent did not grow: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    directory = cwd / "agent-sessions"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tmps = list(directory.glob(".session-*.zip.*.tmp"))
        if len(tmps) == 1 and tmps[0].stat().st_size > 32 << 20:
            return proc, only_session(directory), tmps[0].stat()
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no copy of the ZIP while the session ran: {os.listdir(directory)}")


def test_sigterm_writes_the_zip_that_was_copied_while_the_session_ran(tmp_path: Path) -> None:
    proc, jsonl, copy = _big(tmp_path)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    err = proc.stderr.read() if proc.stderr else ""
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGTERM, err
    assert not err
    directory = tmp_path / "agent-sessions"
    zip_path = only_session(directory, fmt.ZIP_SUFFIX)
    assert zip_path.stat().st_ino == copy.st_ino  # the copy made while it ran is the ZIP
    assert not list(directory.glob(".*.tmp"))
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)
        assert zf.read(fmt.ZIP_EVENTS) == jsonl.read_bytes()
    zipped = load_session(zip_path)
    assert zipped.complete
    assert_one_tree(zipped)
    assert [e.id for e in zipped.events] == [e.id for e in load_session(jsonl).events]


def test_sigkill_leaves_the_copy_and_prune_deletes_it_with_the_session(tmp_path: Path) -> None:
    proc, jsonl, copy = _big(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]
    directory = tmp_path / "agent-sessions"
    (tmp,) = directory.glob(".session-*.zip.*.tmp")
    assert not list(directory.glob("*.zip")), "no ZIP from a SIGKILL"
    session = load_session(jsonl)  # the JSONL is the record
    assert not session.complete
    assert_one_tree(session)

    prune = [sys.executable, "-m", "otel_agent_trace.cli.main", "prune", str(directory)]
    kept = subprocess.run([*prune, "--older-than", "1h"], capture_output=True, text=True, timeout=60)
    assert kept.returncode == 0 and tmp.exists(), kept.stdout + kept.stderr  # not old yet
    hour_ago = time.time() - 7200
    for path in (tmp, *directory.glob("session-*")):
        os.utime(path, (hour_ago, hour_ago))
    done = subprocess.run([*prune, "--older-than", "1h"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{tmp.name} (a ZIP left unfinished)" in done.stdout
    assert not tmp.exists() and not jsonl.exists()
