"""A repeated SIGTERM or Ctrl-C (a supervisor's second signal, an impatient user) never loses the
session ZIP the first one started writing, and no temporary file is ever left behind.

Real signals to real ``opentelemetry-instrument`` processes, each recording a few MB in both tiers
so that stopping takes a while; every delay is tried many times. Outcomes are asserted, not times.
"""

from __future__ import annotations

import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session

from .helpers import AGENTS, assert_one_tree, only_session, start_instrumented

SIGNALLED = AGENTS / "signalled_agent.py"
BOTH_TIERS = {"AGENT_TRACE_TIER": "both"}
RUNS = 4  # per signal and delay (40 runs in all; 10 each, 100 in all, were run when this was built)
DELAYS_MS = (0, 20, 60, 140, 200)
SIGNALS = (signal.SIGTERM, signal.SIGINT)


Started = list[tuple[Path, subprocess.Popen[str]]]


def _start(base: Path, count: int, env: dict[str, str], *args: str) -> Started:
    """``count`` signalled agents, each in its own directory, all past recording their conversation.
    (Run side by side: the stops then compete for the CPU, which only widens the window a second
    signal has to land in.)"""
    started = []
    for run in range(count):
        cwd = base / f"run{run}"
        cwd.mkdir()
        started.append((cwd, start_instrumented(SIGNALLED, cwd, env, *args)))
    for _, proc in started:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line != "ready\n":
            proc.wait(timeout=60)
            err = proc.stderr.read() if proc.stderr else ""
            pytest.fail(f"agent did not start ({proc.returncode}): {err}")
    return started


def _signal_twice(proc: subprocess.Popen[str], signum: int, delay_ms: float) -> None:
    proc.send_signal(signum)
    time.sleep(delay_ms / 1000)
    try:
        proc.send_signal(signum)
    except ProcessLookupError:  # already gone: nothing to repeat
        pass


def _finish(proc: subprocess.Popen[str]) -> str:
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the agent hung after the signals")
    return err


def _stem(directory: Path) -> str:
    return only_session(directory).name[: -len(fmt.JSONL_SUFFIX)]


def _assert_no_temporary_file(directory: Path, what: str) -> None:
    assert directory.is_dir(), f"{what}: no session directory ({sorted(directory.parent.iterdir())})"
    left = sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))
    assert not left, f"{what}: temporary files left behind: {left}"


def _assert_complete_jsonl(directory: Path, what: str) -> dict[str, list[str]]:
    """Both tiers' JSONL files end with ``session.end``; returns each tier's entry ids."""
    stem = _stem(directory)
    ids = {}
    for tier, name in (("trace", stem), ("checkpoint", stem + fmt.CHECKPOINT_SUFFIX)):
        session = load_session(directory / (name + fmt.JSONL_SUFFIX))
        assert session.complete, f"{what}: the {tier} JSONL has no session.end"
        assert_one_tree(session)
        ids[tier] = [e.id for e in session.events]
    return ids


def _assert_zip_matches(zip_path: Path, ids: list[str], what: str) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.testzip() is None, f"{what}: {zip_path.name} is corrupt"
        assert zf.namelist() == list(fmt.ZIP_MEMBERS), what
    zipped = load_session(zip_path)
    assert zipped.complete, f"{what}: {zip_path.name} has no session.end"
    assert [e.id for e in zipped.events] == ids, f"{what}: {zip_path.name} differs from the JSONL"


def _zips(directory: Path) -> dict[str, Path]:
    stem = _stem(directory)
    return {
        "trace": directory / (stem + fmt.ZIP_SUFFIX),
        "checkpoint": directory / (stem + fmt.CHECKPOINT_SUFFIX + fmt.ZIP_SUFFIX),
    }


@pytest.mark.parametrize("delay_ms", DELAYS_MS)
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_repeated_signal_never_loses_the_zip(tmp_path, signum, delay_ms):
    started = _start(tmp_path, RUNS, BOTH_TIERS)
    for _, proc in started:
        _signal_twice(proc, signum, delay_ms)
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        what = f"run {run}, {signal.Signals(signum).name} twice {delay_ms} ms apart (stderr: {err[-500:]!r})"
        assert proc.returncode == -signum, f"{what}: exit status {proc.returncode}, not death by the signal"
        directory = cwd / "agent-sessions"
        _assert_no_temporary_file(directory, what)
        ids = _assert_complete_jsonl(directory, what)
        for tier, zip_path in _zips(directory).items():
            assert zip_path.exists(), f"{what}: the {tier} ZIP was lost"
            _assert_zip_matches(zip_path, ids[tier], what)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_after_the_grace_period_gives_up_the_zip_and_leaves_the_jsonl_complete(tmp_path, signum):
    """With no grace period every repeated signal abandons the ZIP being written: the process
    still dies of the signal, the JSONL files are the complete record, and no temporary file is
    left; a ZIP that was finished before the second signal came is whole."""
    env = dict(BOTH_TIERS, AGENT_TRACE_SIGNAL_GRACE_MS="0")
    delays = (30, 100, 200)
    started = _start(tmp_path, 2 * len(delays), env)
    for run, (_, proc) in enumerate(started):
        _signal_twice(proc, signum, delays[run % len(delays)])
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        delay = delays[run % len(delays)]
        what = f"run {run}, {signal.Signals(signum).name} twice {delay} ms apart ({err[-500:]!r})"
        assert proc.returncode == -signum, f"{what}: exit status {proc.returncode}"
        directory = cwd / "agent-sessions"
        _assert_no_temporary_file(directory, what)
        ids = _assert_complete_jsonl(directory, what)
        for tier, zip_path in _zips(directory).items():
            if zip_path.exists():
                _assert_zip_matches(zip_path, ids[tier], what)


def test_signals_while_the_zip_is_written_at_normal_exit_wait_for_it(tmp_path):
    """SIGTERM twice as the agent exits by itself (the ZIPs are written by the exit handler): the
    ZIPs are finished, and the process then dies of the SIGTERM it was sent."""
    started = _start(tmp_path, 5, BOTH_TIERS, "300", "50")
    for _, proc in started:
        assert proc.stdout is not None and proc.stdout.readline() == "done\n"
        _signal_twice(proc, signal.SIGTERM, 50)
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        what = f"run {run} ({err[-500:]!r})"
        # Death by SIGTERM, or 0 if the process had finished exiting before the signal came.
        assert proc.returncode in (-signal.SIGTERM, 0), f"{what}: exit status {proc.returncode}"
        directory = cwd / "agent-sessions"
        _assert_no_temporary_file(directory, what)
        ids = _assert_complete_jsonl(directory, what)
        for tier, zip_path in _zips(directory).items():
            assert zip_path.exists(), f"{what}: the {tier} ZIP was lost"
            _assert_zip_matches(zip_path, ids[tier], what)


def test_an_export_that_fails_leaves_no_temporary_file(tmp_path):
    """A file already has the ZIP's name: it is not replaced, the failure is reported, the JSONL
    is complete and no temporary file is left."""
    proc = start_instrumented(AGENTS / "zip_blocked_agent.py", tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == "done\n"
    directory = tmp_path / "agent-sessions"
    jsonl = only_session(directory)
    blocker = directory / (jsonl.name[: -len(fmt.JSONL_SUFFIX)] + fmt.ZIP_SUFFIX)
    assert blocker.read_bytes() == b"blocker", "an existing file was replaced"
    assert load_session(jsonl).complete
    _assert_no_temporary_file(directory, "failed export")
    assert "File exists" in err and blocker.name in err, err
