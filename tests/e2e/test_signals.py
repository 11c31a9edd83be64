"""Signals at shutdown (docs/shutdown.md): a repeated SIGTERM or Ctrl-C (a supervisor's second
signal, an impatient user) never loses the session ZIP the first one started writing, no temporary
file is ever left behind, the process dies of the signal as it would without us, and a stop that
cannot finish still ends in that death once the grace period is over (never a hang).

Real signals to real ``opentelemetry-instrument`` processes, each recording a few MB in both tiers
so that stopping takes a while, many side by side (the stops compete for the CPU, which widens the
window a second signal has to land in). Outcomes are asserted, not times. ``SIGNAL_TEST_RUNS``
sets the runs per signal and delay (default 4; it was run with 25 when built).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session

from .helpers import AGENTS, assert_one_tree, clean_env, only_session, start_instrumented

SIGNALLED = AGENTS / "signalled_agent.py"
BOTH_TIERS = {"AGENT_TRACE_TIER": "both"}
RUNS = int(os.environ.get("SIGNAL_TEST_RUNS") or 4)
DELAYS_MS = (0, 20, 60, 140, 200)
SIGNALS = (signal.SIGTERM, signal.SIGINT)
HANG = 120  # seconds: an agent still running after this is a hang

Started = list[tuple[Path, subprocess.Popen[str]]]


@pytest.fixture(autouse=True)
def _interrupt_as_a_terminal_sends_it() -> Iterator[None]:
    """A shell starts a background job with Ctrl-C ignored, children inherit that, and CPython then
    leaves SIGINT ignored: the agents here would never die of it (nor would they without us). So
    they are started with SIGINT at its default, as under a terminal, however the suite was started."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(base: Path, count: int, env: dict[str, str], *args: str) -> Started:
    """``count`` signalled agents, each in its own directory, all past recording their conversation."""
    started = []
    for run in range(count):
        cwd = base / f"run{run}"
        cwd.mkdir()
        started.append((cwd, start_instrumented(SIGNALLED, cwd, env, *args)))
    for _, proc in started:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line != "ready\n":
            proc.wait(timeout=HANG)
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
        _, err = proc.communicate(timeout=HANG)
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


def _assert_jsonl(directory: Path, what: str, complete: bool = True) -> dict[str, list[str]]:
    """Both tiers' JSONL files are one tree (ending with ``session.end`` if ``complete``);
    returns each tier's entry ids."""
    stem = _stem(directory)
    ids = {}
    for tier, name in (("trace", stem), ("checkpoint", stem + fmt.CHECKPOINT_SUFFIX)):
        session = load_session(directory / (name + fmt.JSONL_SUFFIX))
        if complete:
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


def _assert_whole(cwd: Path, what: str) -> None:
    directory = cwd / "agent-sessions"
    _assert_no_temporary_file(directory, what)
    ids = _assert_jsonl(directory, what)
    for tier, zip_path in _zips(directory).items():
        assert zip_path.exists(), f"{what}: the {tier} ZIP was lost"
        _assert_zip_matches(zip_path, ids[tier], what)


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
        _assert_whole(cwd, what)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_one_signal_dies_of_it_with_the_zips_whole(tmp_path, signum):
    """One Ctrl-C: exit status -2 as without us (not 1: nothing at exit may ``exec`` a string,
    which resets CPython's record of the interrupt); one SIGTERM: -15."""
    started = _start(tmp_path, 2, BOTH_TIERS)
    for _, proc in started:
        proc.send_signal(signum)
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        what = f"run {run}, one {signal.Signals(signum).name} (stderr: {err[-800:]!r})"
        assert proc.returncode == -signum, f"{what}: exit status {proc.returncode}, not death by the signal"
        _assert_whole(cwd, what)


def test_signals_while_the_zip_is_written_at_normal_exit_wait_for_it(tmp_path):
    """SIGTERM twice as the agent exits by itself (the ZIPs are written by the exit handler): the
    ZIPs are finished, and the process then dies of the SIGTERM it was sent."""
    started = _start(tmp_path, RUNS, BOTH_TIERS, "300", "50")
    for _, proc in started:
        assert proc.stdout is not None and proc.stdout.readline() == "done\n"
        _signal_twice(proc, signal.SIGTERM, 50)
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        what = f"run {run} ({err[-500:]!r})"
        # Death by SIGTERM, or 0 if the process had finished exiting before the signal came.
        assert proc.returncode in (-signal.SIGTERM, 0), f"{what}: exit status {proc.returncode}"
        _assert_whole(cwd, what)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_past_the_grace_period_the_process_dies_of_the_signal_and_leaves_no_temporary_file(tmp_path, signum):
    """A grace period too short for the ZIPs: the process still dies of the first signal, leaves
    no temporary file, its JSONL files are one readable tree, and a ZIP that is there is whole."""
    env = dict(BOTH_TIERS, AGENT_TRACE_SIGNAL_GRACE_MS="1")
    started = _start(tmp_path, 2 * RUNS, env)
    for run, (_, proc) in enumerate(started):
        _signal_twice(proc, signum, (0, 100)[run % 2])
    for run, (cwd, proc) in enumerate(started):
        err = _finish(proc)
        what = f"run {run}, {signal.Signals(signum).name} ({err[-500:]!r})"
        assert proc.returncode == -signum, f"{what}: exit status {proc.returncode}"
        directory = cwd / "agent-sessions"
        _assert_no_temporary_file(directory, what)
        ids = _assert_jsonl(directory, what, complete=False)
        for tier, zip_path in _zips(directory).items():
            if zip_path.exists():
                _assert_zip_matches(zip_path, ids[tier], what)


class _Blackhole:
    """An OTLP backend that accepts connections and never answers (a hung collector)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def test_a_stop_that_cannot_finish_ends_in_death_by_the_signal(tmp_path):
    """The agent's stderr is a full pipe nobody reads, and the stop on SIGTERM writes to it (the
    warning that spans could not reach the hung OTLP backend): that write never returns. The
    grace period (2 s here) ends the process, by SIGTERM, with the ZIPs (written before the
    forwarding) whole."""
    hole = _Blackhole()
    try:
        env = dict(
            BOTH_TIERS,
            AGENT_TRACE_SIGNAL_GRACE_MS="2000",
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{hole.port}",
            OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
            OTEL_BSP_EXPORT_TIMEOUT="1000",
        )
        started = []
        for run in range(2):
            cwd = tmp_path / f"run{run}"
            cwd.mkdir()
            proc = start_instrumented(AGENTS / "stderr_blocked_agent.py", cwd, env)
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
            started.append((cwd, proc))
        for run, (_, proc) in enumerate(started):
            _signal_twice(proc, signal.SIGTERM, (0, 100)[run])
        for run, (cwd, proc) in enumerate(started):
            try:
                proc.wait(timeout=HANG)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                pytest.fail(f"run {run}: the agent hung after SIGTERM")
            assert proc.returncode == -signal.SIGTERM, f"run {run}: exit status {proc.returncode}"
            _assert_whole(cwd, f"run {run}")
    finally:
        hole.close()


def test_processes_that_stopped_their_session_exit_cleanly(tmp_path: Path):
    """A process whose session was stopped before it exits (``with oat.session()``, a child
    joining its parent's session) starts no thread at exit: on CPython 3.11.2 the watchdog
    started then for nothing, still starting as the interpreter finalized, crashed most such
    processes with SIGSEGV."""
    code = "import otel_agent_trace as oat\nwith oat.session():\n    with oat.tool('work'):\n        pass\n"
    env = clean_env({"AGENT_TRACE_DIR": str(tmp_path), "AGENT_TRACE_ZIP": "0"})
    env |= {"AGENT_TRACE_SESSION_ID": "0123456789abcdef0123456789abcdef", "AGENT_TRACE_PARENT_SPAN": "a" * 16}
    outcomes = []
    for _ in range(24):  # one after another (side by side, the race was seldom lost)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        outcomes.append((done.returncode, done.stderr))
    assert [status for status, _ in outcomes] == [0] * len(outcomes), outcomes
    assert len(list(tmp_path.glob("*.jsonl"))) == len(outcomes)  # each child wrote its file
