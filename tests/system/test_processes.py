"""Child processes are child spans of the tool that started them: command, working directory,
pid, exit code and duration; exec and fork are events."""

from __future__ import annotations

import asyncio
import contextvars
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import orjson
import pytest
from opentelemetry.trace import SpanKind

import otel_agent_trace as oat

from .conftest import entries, events_under, spans_under, tool_start


def _process_spans(s, tool: str) -> list[dict]:
    all_entries = entries(s)
    return [e for e in spans_under(all_entries, tool_start(all_entries, tool)) if e["layer"] == "sys"]


def _args_and_code(span: dict) -> tuple[list[str], int]:
    return span["attributes"]["process.command_args"], span["attributes"]["process.exit.code"]


def test_subprocess_run_is_a_child_span_with_command_cwd_pid_exit_code(session, memory_exporter, tmp_path):
    with oat.tool("shell"):
        done = subprocess.run(["sh", "-c", "exit 3"], cwd=tmp_path)
    assert done.returncode == 3
    (span,) = _process_spans(session, "shell")
    attrs = span["attributes"]
    assert span["name"] == "process sh"
    assert attrs["process.command_args"] == ["sh", "-c", "exit 3"]
    assert attrs["process.executable.name"] == "sh"
    assert attrs["process.working_directory"] == str(tmp_path)
    assert attrs["process.exit.code"] == 3
    assert isinstance(attrs["process.pid"], int) and attrs["process.pid"] > 0
    assert span["duration_ns"] > 0
    otel = next(s for s in memory_exporter.get_finished_spans() if s.name == "process sh")
    tool = next(s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool shell")
    assert otel.parent.span_id == tool.context.span_id and otel.kind is SpanKind.INTERNAL


def test_every_subprocess_helper_and_shell_form(session):
    with oat.tool("helpers"):
        assert subprocess.call(["true"], stdout=subprocess.DEVNULL) == 0
        assert subprocess.check_output(["echo", "hi"]) == b"hi\n"
        with pytest.raises(subprocess.CalledProcessError):
            subprocess.check_call("exit 4", shell=True)
        proc = subprocess.Popen(["sleep", "0.05"])
        while proc.poll() is None:
            pass
    spans = _process_spans(session, "helpers")
    assert [_args_and_code(s) for s in spans] == [
        (["true"], 0),
        (["echo", "hi"], 0),
        (["/bin/sh", "-c", "exit 4"], 4),
        (["sleep", "0.05"], 0),
    ]
    assert os.getcwd() == spans[0]["attributes"]["process.working_directory"]
    # Popen's own plumbing (os.open of /dev/null for DEVNULL) is not the tool's file activity
    assert not [e for e in entries(session) if e["type"] == "span.event" and e["name"] == "file.open"]


def test_a_command_that_cannot_start_is_an_error_span_and_the_error_is_unchanged(session):
    with oat.tool("missing"), pytest.raises(FileNotFoundError) as info:
        subprocess.run(["/nonexistent/definitely-not-here", "x"])
    assert info.value.filename == "/nonexistent/definitely-not-here"
    (span,) = _process_spans(session, "missing")
    assert span["status"]["code"] == "ERROR"
    assert span["attributes"]["error.type"] == "FileNotFoundError"
    assert "process.exit.code" not in span["attributes"]


def test_os_system_is_a_span_with_the_exit_code(session):
    with oat.tool("system"):
        status = os.system("exit 2")
    assert os.waitstatus_to_exitcode(status) == 2
    (span,) = _process_spans(session, "system")
    assert span["attributes"]["process.command_args"] == ["/bin/sh", "-c", "exit 2"]
    assert span["attributes"]["process.exit.code"] == 2


async def test_asyncio_subprocesses_are_spans_ended_when_they_exit(session):
    with oat.tool("async_shell"):
        proc = await asyncio.create_subprocess_exec("sh", "-c", "exit 5")
        assert await proc.wait() == 5
        proc = await asyncio.create_subprocess_shell("echo out", stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        assert out == b"out\n"
    spans = _process_spans(session, "async_shell")
    assert [_args_and_code(s) for s in spans] == [
        (["sh", "-c", "exit 5"], 5),
        (["/bin/sh", "-c", "echo out"], 0),
    ]


def test_a_process_started_from_a_thread_of_the_tool_belongs_to_the_tool(session):
    with oat.tool("threaded_shell"):
        ctx = contextvars.copy_context()
        t = threading.Thread(target=ctx.run, args=(subprocess.run, ["true"]))
        t.start()
        t.join()
    (span,) = _process_spans(session, "threaded_shell")
    assert span["attributes"]["process.command_args"] == ["true"]


def test_fork_is_an_event_in_the_parent(session):
    with oat.tool("forker"):
        pid = os.fork()
        if pid == 0:  # the child: leave at once, without running any test machinery
            os._exit(7)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
    all_entries = entries(session)
    (fork,) = events_under(all_entries, tool_start(all_entries, "forker"), "process.fork")
    assert fork["attributes"]["process.pid"] == pid


def test_posix_spawn_called_directly_is_an_event(session):
    with oat.tool("spawner"):
        pid = os.posix_spawnp("true", ["true", "spawned"], dict(os.environ))
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    all_entries = entries(session)
    (spawn,) = events_under(all_entries, tool_start(all_entries, "spawner"), "process.spawn")
    assert spawn["attributes"]["process.command_args"] == ["true", "spawned"]
    assert spawn["attributes"]["process.executable.path"] == "true"


def test_a_failed_exec_is_recorded_and_raises_unchanged(session):
    with oat.tool("exec_fail"), pytest.raises(FileNotFoundError):
        os.execv("/nonexistent/exec-target", ["exec-target", "--flag"])
    all_entries = entries(session)
    start = tool_start(all_entries, "exec_fail")
    (attempt,) = events_under(all_entries, start, "process.exec")
    assert attempt["attributes"]["process.command_args"] == ["exec-target", "--flag"]
    assert attempt["attributes"]["process.executable.path"] == "/nonexistent/exec-target"
    (error,) = events_under(all_entries, start, "process.exec.error")
    assert error["attributes"]["error.type"] == "FileNotFoundError"


_EXEC_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import otel_agent_trace as oat
    from otel_agent_trace.instrumentation.system.processes import ProcessesInstrumentor
    from otel_agent_trace.settings import Settings

    ProcessesInstrumentor().instrument()
    directory = sys.argv[1]
    oat.session("exec", directory=directory, settings=Settings(directory=directory)).start()
    with oat.tool("replace_me"):
        os.execvp("true", ["true", "arg"])  # execvp tries PATH entries: one event, not one a try
    """
)


def test_a_successful_exec_is_on_disk_before_the_process_is_replaced(tmp_path: Path):
    directory = tmp_path / "sessions"
    command = [sys.executable, "-c", _EXEC_SCRIPT, str(directory)]
    done = subprocess.run(command, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    (session_file,) = directory.glob("*.jsonl")
    all_entries = [orjson.loads(line) for line in session_file.read_bytes().splitlines()]
    execs = [e for e in all_entries if e["type"] == "span.event" and e["name"] == "process.exec"]
    assert len(execs) == 1
    assert execs[0]["attributes"]["process.command_args"] == ["true", "arg"]
    assert execs[0]["parent_id"] == tool_start(all_entries, "replace_me")["id"]


def test_no_process_span_outside_a_session(system_layer, memory_exporter):
    with oat.tool("quiet"):
        subprocess.run(["true"])
        os.system("true")
    assert [s.name for s in memory_exporter.get_finished_spans()] == ["execute_tool quiet"]


def test_devduck_style_shell_pty_fork_then_execvp_is_recorded(session):
    """DevDuck's shell tool: ``pty.fork()`` then ``os.execvp("/bin/sh", …)`` in the child."""
    import pty

    with oat.tool("pty_shell"):
        pid, master = pty.fork()
        if pid == 0:  # the child
            try:
                os.execvp("/bin/sh", ["/bin/sh", "-c", "echo from-the-shell"])
            finally:
                os._exit(127)
        output = b""
        while True:
            try:
                chunk = os.read(master, 1024)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        os.close(master)
        _, status = os.waitpid(pid, 0)
    assert b"from-the-shell" in output and os.waitstatus_to_exitcode(status) == 0
    all_entries = entries(session)
    (fork,) = events_under(all_entries, tool_start(all_entries, "pty_shell"), "process.fork")
    assert fork["attributes"]["process.pid"] == pid
    # The child recorded its exec (into its own file of the same session) before it was replaced.
    directory = session.files[0].parent
    child_entries = [
        orjson.loads(line)
        for path in directory.glob("*.jsonl")
        if path != session.files[0]
        for line in path.read_bytes().splitlines()
    ]
    execs = [e for e in child_entries if e["type"] == "span.event" and e["name"] == "process.exec"]
    assert [e["attributes"]["process.command_args"] for e in execs] == [
        ["/bin/sh", "-c", "echo from-the-shell"]
    ]
    assert execs[0]["span_id"] == fork["span_id"]  # under the tool span, as in the parent


def test_the_system_layer_setting_turns_recording_off(system_layer, provider, tmp_path):
    from otel_agent_trace.settings import Settings

    directory = tmp_path / "sessions"
    settings = Settings(directory=directory, system_layer=False)
    s = oat.session("off", directory=directory, settings=settings).start()
    try:
        with oat.tool("off_tool"):
            subprocess.run(["true"])
            (tmp_path / "f.txt").write_text("x")
    finally:
        s.stop()
    kinds = {(e["type"], e.get("layer")) for e in entries(s)}
    assert ("span.start", "sys") not in kinds and ("span.event", "sys") not in kinds
