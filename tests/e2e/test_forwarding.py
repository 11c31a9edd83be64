"""The same spans go to a real OTLP backend (Arize Phoenix), over HTTP and gRPC; a dead backend
changes nothing for the agent."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt

from .helpers import (
    AGENTS,
    DEMO_AGENT,
    INSTRUMENT,
    assert_one_tree,
    clean_env,
    load,
    only_session,
    run_instrumented,
    start_instrumented,
    stderr_problems,
)

PROTOCOLS = ["http/protobuf", "grpc"]
DEMO_ANSWER = "The examples folder holds a demo agent and its demo model; Python runs fine here."


def _attr(span: dict, key: str):
    """An attribute of a Phoenix span (flat ``a.b`` keys or nested ``{"a": {"b": …}}``)."""
    attrs = span.get("attributes") or {}
    if key in attrs:
        return attrs[key]
    node = attrs
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


@pytest.mark.phoenix
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_spans_reach_phoenix_with_the_same_tree_as_the_session_file(tmp_path, phoenix, protocol):
    done = run_instrumented(DEMO_AGENT, tmp_path, phoenix.otlp_env(protocol))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEMO_ANSWER
    assert not stderr_problems(done.stderr), done.stderr

    path = only_session(tmp_path / "agent-sessions")
    session = load(path)
    assert_one_tree(session)
    text = path.read_text()
    assert (
        "/v1/traces" not in text and f":{phoenix.port}" not in text and f":{phoenix.grpc_port}" not in text
    ), "the export to the backend was recorded as the agent's own activity"
    local = {s.span_id: s for s in session.spans}
    assert all(s.finished for s in local.values())
    by_trace: dict[str, list] = {}
    for span in local.values():
        by_trace.setdefault(span.trace_id, []).append(span)

    remote: dict[str, dict] = {}
    for trace_id, spans in by_trace.items():
        for got in phoenix.spans(trace_id, expect=len(spans)):
            remote[got["context"]["span_id"]] = got
    assert set(remote) == set(local), "the backend has exactly the spans of the session file"
    for span_id, span in local.items():
        got = remote[span_id]
        assert got["context"]["trace_id"] == span.trace_id
        assert got["parent_id"] == span.parent_span_id
        assert got["name"] == span.name
        assert _attr(got, "session.id") == session.session_id


@pytest.mark.phoenix
def test_sigterm_still_forwards_what_finished(tmp_path, phoenix):
    """SIGTERM kills the process without atexit: spans queued for the backend are sent first."""
    proc = start_instrumented(AGENTS / "looping_agent.py", tmp_path, phoenix.otlp_env("http/protobuf"))
    assert proc.stdout is not None
    for _ in range(3):
        assert proc.stdout.readline().startswith("step ")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()
    session = load(only_session(tmp_path / "agent-sessions"))
    finished = [s for s in session.spans if s.finished]
    assert len(finished) >= 3
    trace_id = finished[0].trace_id
    got = phoenix.spans(trace_id, expect=sum(s.trace_id == trace_id for s in finished))
    assert {s.span_id for s in finished if s.trace_id == trace_id} <= {g["context"]["span_id"] for g in got}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when we return: nothing listens there


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_down_changes_nothing_for_the_agent(tmp_path, protocol):
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_BSP_EXPORT_TIMEOUT": "2000",
    }
    started = time.monotonic()
    done = run_instrumented(DEMO_AGENT, tmp_path, env, timeout=60)  # a hang fails here
    took = time.monotonic() - started
    print(f"{protocol}: exit after {took:.1f}s with the backend down")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEMO_ANSWER
    ours = [line for line in done.stderr.splitlines() if "otel-agent-trace" in line]
    assert len(ours) == 1, f"one clear warning, got:\n{done.stderr}"
    assert "not forwarded" in ours[0] or "could not forward" in ours[0]
    assert "local session is complete" in ours[0]
    others = [line for line in stderr_problems(done.stderr) if "otel-agent-trace" not in line]
    assert not others, f"the exporter's own retry noise leaked:\n{done.stderr}"

    session = load(only_session(tmp_path / "agent-sessions"))
    assert session.complete
    assert_one_tree(session)
    assert all(s.finished for s in session.spans)
    assert sum(s.layer == "tool" for s in session.spans) == 3
    assert only_session(tmp_path / "agent-sessions", fmt.ZIP_SUFFIX).exists()


class _Blackhole:
    """A backend that accepts connections and never answers (a hung collector)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

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


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_hung_backend_does_not_hold_the_agent_or_its_exit(tmp_path, protocol):
    hole = _Blackhole()
    try:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hole.port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
            "OTEL_BSP_EXPORT_TIMEOUT": "2000",
        }
        started = time.monotonic()
        done = run_instrumented(DEMO_AGENT, tmp_path, env, timeout=60)  # a hang fails here
        print(f"{protocol}: exit after {time.monotonic() - started:.1f}s with a hung backend")
    finally:
        hole.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEMO_ANSWER
    ours = [line for line in done.stderr.splitlines() if "otel-agent-trace" in line]
    assert len(ours) == 1, f"one clear warning, got:\n{done.stderr}"
    session = load(only_session(tmp_path / "agent-sessions"))
    assert session.complete and all(s.finished for s in session.spans)


def test_a_backend_that_cannot_keep_up_drops_are_counted_and_reported_once(tmp_path):
    """A small queue and a hung backend: spans beyond the queue are dropped from forwarding (never
    blocking the agent), reported once, and counted in the tally at exit."""
    hole = _Blackhole()
    try:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hole.port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_MAX_QUEUE_SIZE": "16",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "8",
            "OTEL_BSP_EXPORT_TIMEOUT": "2000",
        }
        done = run_instrumented(AGENTS / "looping_agent.py", tmp_path, env, "200", timeout=90)
    finally:
        hole.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "done"
    assert "Queue full" not in done.stderr, "the SDK's per-span warning leaked"
    ours = [line for line in done.stderr.splitlines() if "otel-agent-trace" in line]
    assert any("not keeping up" in line for line in ours), done.stderr
    assert len(ours) <= 2, f"reported once (plus the tally at exit), got:\n{done.stderr}"
    tally = [line for line in ours if "were not forwarded" in line]
    assert tally and int(tally[0].split("otel-agent-trace: ")[1].split()[0]) >= 150
    session = load(only_session(tmp_path / "agent-sessions"))
    assert sum(s.name == "execute_tool work" and s.finished for s in session.spans) == 200


# --- a backend that is down, stopped mid-run, or comes back ----------------------------------------

BACKEND_AGENTS = Path(__file__).resolve().parents[1] / "backends" / "agents"


def _ours(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "otel-agent-trace" in line]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_exit_with_a_dead_backend_stays_within_the_export_timeout(tmp_path, protocol):
    """5,000 spans and nothing listening: the agent's exit (from the end of its work) stays within
    the configured ``OTEL_BSP_EXPORT_TIMEOUT`` (it used to wait all of it and then some: once the
    backend has been seen failing, exit waits about 2 s), and the last word says what was not sent."""
    timeout_s = 20
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_BSP_EXPORT_TIMEOUT": str(timeout_s * 1000),
    }
    proc = start_instrumented(BACKEND_AGENTS / "many_spans.py", tmp_path, env, "5000")
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().strip() == "done"
    work_ended = time.monotonic()
    stderr = proc.stderr.read()
    proc.wait(timeout=120)
    exit_took = time.monotonic() - work_ended
    proc.stdout.close()
    proc.stderr.close()
    print(f"{protocol}: exit took {exit_took:.1f}s after the work ended")
    assert proc.returncode == 0, stderr
    assert exit_took < timeout_s, f"exit took {exit_took:.1f}s, beyond OTEL_BSP_EXPORT_TIMEOUT={timeout_s}s"
    last = stderr.strip().splitlines()[-1]
    assert "otel-agent-trace: 5001 of 5001 span(s) were not forwarded" in last, stderr
    assert "local session is complete" in last and "retrying" not in stderr, stderr
    session = load(only_session(tmp_path / "agent-sessions"))
    assert session.complete and sum(s.finished for s in session.spans) == 5001


def test_sigterm_with_a_dead_backend_stays_within_the_export_timeout(tmp_path):
    timeout_s = 20
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_BSP_EXPORT_TIMEOUT": str(timeout_s * 1000),
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    proc = start_instrumented(AGENTS / "looping_agent.py", tmp_path, env)
    assert proc.stdout is not None and proc.stderr is not None
    for _ in range(50):
        assert proc.stdout.readline().startswith("step ")
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    took = time.monotonic() - signalled
    stderr = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    print(f"exit took {took:.1f}s after SIGTERM")
    assert took < timeout_s, (
        f"exit took {took:.1f}s after SIGTERM, beyond OTEL_BSP_EXPORT_TIMEOUT={timeout_s}s"
    )
    assert "were not forwarded" in _ours(stderr)[-1], stderr
    session = load(only_session(tmp_path / "agent-sessions"))
    assert sum(s.name == "execute_tool work" and s.finished for s in session.spans) >= 50
    assert only_session(tmp_path / "agent-sessions", fmt.ZIP_SUFFIX).exists()


class _Gate:
    """A backend address that refuses connections (the port is held, nothing listens) until
    :meth:`open`, then forwards every connection to a real receiver (a backend coming back)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._conns: list[socket.socket] = []

    def open(self) -> None:
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()
        for conn in self._conns:
            conn.close()


@pytest.mark.phoenix
def test_spans_sent_after_the_backend_comes_back_arrive(tmp_path, phoenix):
    gate = _Gate(phoenix.port)
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{gate.port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2",  # the exporter gives a batch up after 2 s of retries
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    proc = subprocess.Popen(
        [INSTRUMENT, sys.executable, str(BACKEND_AGENTS / "phased_agent.py"), "5"],
        cwd=tmp_path,
        env=clean_env(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().strip() == "waiting"
        first = proc.stderr.readline()  # the backend seen down: one warning, while the agent runs
        assert "could not forward" in first, first
        gate.open()
        proc.stdin.write("go\n")
        proc.stdin.close()
        assert proc.stdout.readline().strip() == "done"
        proc.wait(timeout=120)
        stderr = first + proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        gate.close()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    assert proc.returncode == 0, stderr
    session = load(only_session(tmp_path / "agent-sessions"))
    assert session.complete
    after = [s for s in session.spans if s.name == "execute_tool phase2"]
    root = next(s for s in session.spans if s.name == "invoke_agent phased")
    got = {g["context"]["span_id"] for g in phoenix.spans(root.trace_id, expect=len(after) + 1)}
    assert {s.span_id for s in after} | {root.span_id} <= got, "spans sent after the backend came back arrive"
    lost = [line for line in _ours(stderr) if "were not forwarded" in line]
    if lost:  # what was sent while it was down, and only that, is reported as not sent
        assert 1 <= int(lost[-1].split("otel-agent-trace: ")[1].split()[0]) <= 5, stderr


_SIGTERM_DURING_SHUTDOWN = """
import os, signal, time
import otel_agent_trace as oat
from opentelemetry import trace
from otel_agent_trace._internal import sdk_compat
from otel_agent_trace.recording.forwarding import ForwardingSpanProcessor

@oat.tool
def work(step):
    return step

for step in range(3):
    work(step)
(forwarding,) = [p for p in sdk_compat.span_processors(trace.get_tracer_provider())
                 if isinstance(p, ForwardingSpanProcessor)]
with forwarding._close_lock:  # the main thread inside the processor's own shutdown, as at exit
    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, on this thread
    time.sleep(60)
"""


@pytest.mark.phoenix
def test_sigterm_while_the_main_thread_is_inside_the_forwarding_shutdown_still_forwards(tmp_path, phoenix):
    """The SIGTERM handler forwards what is queued on the main thread, which may be inside the
    forwarding processor's shutdown at that moment (its lock held): the handler must not wait on
    its own thread (before, it did until the watchdog ended the process, and the spans were lost)."""
    script = tmp_path / "agent.py"
    script.write_text(_SIGTERM_DURING_SHUTDOWN)
    env = dict(
        phoenix.otlp_env("http/protobuf"), OTEL_BSP_SCHEDULE_DELAY="60000", AGENT_TRACE_SIGNAL_GRACE_MS="8000"
    )
    proc = start_instrumented(script, tmp_path, env)
    _out, stderr = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGTERM, stderr
    session = load(only_session(tmp_path / "agent-sessions"))
    tools = [s for s in session.spans if s.name == "execute_tool work" and s.finished]
    assert len(tools) == 3
    got = phoenix.spans(tools[0].trace_id, expect=1, timeout=30)
    assert tools[0].span_id in {g["context"]["span_id"] for g in got}, stderr
