"""``opentelemetry-instrument python agent.py`` with nothing else set: a local session tree and ZIP."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

from otel_agent_trace import session_format as fmt

from .helpers import (
    AGENTS,
    DEMO_AGENT,
    assert_one_tree,
    clean_env,
    load,
    only_session,
    run_instrumented,
    sessions_in,
    start_instrumented,
    stderr_problems,
)

DEMO_ANSWER = "The examples folder holds a demo agent and its demo model; Python runs fine here."


def _run_demo(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = run_instrumented(DEMO_AGENT, cwd, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEMO_ANSWER
    return done


def test_main_job_writes_a_session_tree_and_zip(tmp_path):
    done = _run_demo(tmp_path)
    directory = tmp_path / "agent-sessions"
    jsonl = only_session(directory)
    zip_path = only_session(directory, fmt.ZIP_SUFFIX)
    assert zip_path.name == jsonl.name[: -len(fmt.JSONL_SUFFIX)] + fmt.ZIP_SUFFIX
    assert done.stderr.strip() == "", f"nothing should be printed, got:\n{done.stderr}"

    session = load(jsonl)
    assert session.complete and not session.issues
    assert_one_tree(session)
    spans = {s.name: s for s in session.spans}
    agent = spans["invoke_agent demo-agent"]
    tools = [s for s in session.spans if s.layer == "tool"]
    names = {s.name for s in tools}
    assert names == {"execute_tool list_files", "execute_tool read_file", "execute_tool run_command"}
    for tool in tools:
        assert tool.finished and tool.status != fmt.STATUS_ERROR
        assert tool.parent_span_id == agent.span_id and tool.trace_id == agent.trace_id
        assert tool.parent_entry_id == agent.entry_id
    assert all(s.attributes.get("session.id") == session.session_id for s in session.spans)
    assert len(session.snapshots) == 4

    with zipfile.ZipFile(zip_path) as zf:
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)
        assert zf.read(fmt.ZIP_EVENTS) == jsonl.read_bytes()
        metadata = orjson.loads(zf.read(fmt.ZIP_METADATA))
    assert metadata["session_id"] == session.session_id
    zipped = load(zip_path)
    assert [e.id for e in zipped.events] == [e.id for e in session.events]
    assert [s["snapshot_id"] for s in zipped.snapshots] == [1, 2, 3, 4]


def test_bare_agent_loop_is_one_connected_tree(tmp_path):
    done = run_instrumented(AGENTS / "bare_loop.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alpha,beta"
    session = load(only_session(tmp_path / "agent-sessions"))
    assert_one_tree(session)
    spans = session.spans
    assert [s.name for s in spans] == [
        "chat scripted-model",
        "execute_tool lookup",
        "chat scripted-model",
        "execute_tool lookup",
        "chat scripted-model",
    ]
    assert len({s.trace_id for s in spans}) == 5, "each call is a trace of its own"
    assert all(s.parent_entry_id == session.root.id for s in spans)
    assert {s.attributes["session.id"] for s in spans} == {session.session_id}


def test_two_sessions_started_together_never_collide(tmp_path):
    procs = [start_instrumented(AGENTS / "looping_agent.py", tmp_path, None, "20") for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip().endswith("done")
    directory = tmp_path / "agent-sessions"
    files = sessions_in(directory)
    assert len(files) == 2, files
    assert len(sessions_in(directory, fmt.ZIP_SUFFIX)) == 2
    loaded = [load(f) for f in files]
    assert loaded[0].session_id != loaded[1].session_id
    assert {e.id for e in loaded[0].events}.isdisjoint(e.id for e in loaded[1].events)
    for session in loaded:
        assert_one_tree(session)
        assert sum(s.name == "execute_tool work" for s in session.spans) == 20


@pytest.mark.parametrize("distro", ["agent_trace", "distro"])
def test_with_opentelemetry_distro_installed_either_distro_records(tmp_path, distro):
    """``opentelemetry-distro`` is installed in the test environment; whichever distro
    ``OTEL_PYTHON_DISTRO`` picks, the local session is recorded."""
    env = {"OTEL_PYTHON_DISTRO": distro}
    if distro == "distro":
        # Its configurator defaults to exporting over OTLP: point that at nothing quietly.
        env.update(OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none")
    _run_demo(tmp_path, env)
    session = load(only_session(tmp_path / "agent-sessions"))
    assert_one_tree(session)
    assert sum(s.layer == "tool" for s in session.spans) == 3
    assert session.complete


def test_own_io_is_not_recorded(tmp_path):
    _run_demo(tmp_path)
    jsonl = only_session(tmp_path / "agent-sessions")
    text = jsonl.read_text()
    for own in (jsonl.name, jsonl.stem + fmt.ZIP_SUFFIX):
        assert own not in text, f"the session records its own file {own}"
    entries = [orjson.loads(line) for line in text.splitlines()]
    sys_entries = [e for e in entries if e.get("layer") == "sys"]
    assert not [e for e in sys_entries if "agent-sessions" in orjson.dumps(e).decode()]


def test_without_instrument_the_agent_runs_unrecorded(tmp_path):
    """The same script without ``opentelemetry-instrument`` runs the same and writes nothing."""
    done = subprocess.run(
        [sys.executable, str(DEMO_AGENT)], cwd=tmp_path, env=clean_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DEMO_ANSWER
    assert not stderr_problems(done.stderr)
