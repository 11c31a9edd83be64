"""Child processes get the trace context and the session identity: in-process checks of every
spawn path, and the real thing end to end under ``opentelemetry-instrument``."""

from __future__ import annotations

import asyncio
import os
import pty
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from tests.e2e.helpers import INSTRUMENT, clean_env

from .helpers import by_name, spans_of, tree

SCRIPTS = Path(__file__).parent / "scripts"
SHOW = (
    'echo "$TRACEPARENT|$AGENT_TRACE_SESSION_ID|$AGENT_TRACE_PARENT_SPAN|$AGENT_TRACE_DIR|$AGENT_TRACE_TIER"'
)


def expected(recording: oat.Session) -> str:
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    traceparent = f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    directory = Path(recording.files[0]).parent.absolute()
    return f"{traceparent}|{recording.session_id}|{ctx.span_id:016x}|{directory}|trace"


def test_subprocess_with_inherited_and_explicit_env(recording, context_instrumented):
    mine = {"PATH": os.environ["PATH"]}
    with oat.tool("spawn"):
        want = expected(recording)
        inherited = subprocess.run(["sh", "-c", SHOW], capture_output=True, text=True).stdout.strip()
        explicit = subprocess.run(["sh", "-c", SHOW], env=mine, capture_output=True, text=True).stdout.strip()
        popen = subprocess.Popen(["sh", "-c", SHOW], stdout=subprocess.PIPE, text=True)
        from_popen = popen.communicate()[0].strip()
    assert inherited == explicit == from_popen == want
    assert mine == {"PATH": os.environ["PATH"]}  # the caller's dict is not changed
    assert "TRACEPARENT" not in os.environ  # nor this process's environment


def test_os_system_posix_spawn_and_asyncio(recording, context_instrumented, tmp_path):
    out = tmp_path / "system.txt"
    with oat.tool("spawn"):
        want = expected(recording)
        assert os.system(f"{SHOW} > {out}") == 0
        pid = os.posix_spawn("/bin/sh", ["sh", "-c", f"{SHOW} > {tmp_path / 'spawn.txt'}"], {"PATH": "/bin"})
        assert os.waitpid(pid, 0)[1] == 0

        async def run() -> bytes:
            proc = await asyncio.create_subprocess_exec("sh", "-c", SHOW, stdout=subprocess.PIPE)
            return (await proc.communicate())[0]

        from_asyncio = asyncio.run(run()).decode().strip()
    assert out.read_text().strip() == want
    assert (tmp_path / "spawn.txt").read_text().strip() == want
    assert from_asyncio == want


def test_pty_fork_and_execvp_like_devduck(recording, context_instrumented):
    with oat.tool("shell"):
        want = expected(recording)
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp("sh", ["sh", "-c", SHOW])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        os.close(fd)
    assert out.decode().strip() == want


def test_nothing_is_added_outside_a_span_and_a_session(provider, context_instrumented):
    env = {"PATH": os.environ["PATH"]}
    shown = subprocess.run(["sh", "-c", SHOW], env=env, capture_output=True, text=True).stdout.strip()
    assert shown == "||||"


def test_child_python_processes_join_the_session_under_the_spawning_span(tmp_path):
    sessions = tmp_path / "sessions"
    done = subprocess.run(
        [INSTRUMENT, sys.executable, str(SCRIPTS / "parent.py")],
        cwd=tmp_path,
        env=clean_env({"AGENT_TRACE_DIR": "sessions"}),  # relative: children get it absolute
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "Failed to auto initialize" not in done.stderr, done.stderr
    (zip_path,) = sessions.glob("*.zip")
    session_id = zip_path.stem
    children = sorted(p.name for p in sessions.glob(f"{session_id}.p*.jsonl"))
    with zipfile.ZipFile(zip_path) as zf:
        metadata = orjson.loads(zf.read(fmt.ZIP_METADATA))
    assert metadata["files"] == [f"{session_id}.jsonl", *children]  # every child file is in the ZIP

    loaded = oat.load_session(zip_path)
    spans = spans_of(zip_path)
    run_child = by_name(spans, "execute_tool run-child")
    shell = by_name(spans, "execute_tool shell")
    # the spawning span is the tool span, or the process span the system layer puts under it
    spawners = {run_child.span_id: "subprocess", shell.span_id: "pty"}
    for s in spans:
        if s.parent_span_id in (run_child.span_id, shell.span_id) and s.layer == "sys":
            spawners[s.span_id] = spawners[s.parent_span_id]
    # one join per Python child (and one for the forked pty child before its exec, when the
    # system layer records that exec): each under the span that started it
    joins = [e for e in loaded.events if e.type == fmt.SESSION_JOIN]
    assert {spawners[j.data["metadata"]["parent_span_id"]] for j in joins} == {"subprocess", "pty"}
    for how in ("subprocess", "pty"):
        child = by_name(spans, f"execute_tool child-{how}")
        join = loaded.entry(child.parent_entry_id)
        assert join.type == fmt.SESSION_JOIN
        assert join.data["metadata"]["parent_span_id"] == child.parent_span_id
    for how in ("subprocess", "pty"):
        child = by_name(spans, f"execute_tool child-{how}")
        assert spawners[child.parent_span_id] == how
        assert child.trace_id == run_child.trace_id
        assert tree(spans, child.span_id) == [(f"execute_tool child-{how}-thread", [])]
        line = next(x for x in done.stdout.splitlines() if x.startswith(f"{how} TRACEPARENT="))
        assert line.endswith(f"-{child.parent_span_id}-03") or line.endswith(f"-{child.parent_span_id}-01")
    shell_line = next(x for x in done.stdout.splitlines() if x.startswith("sh TRACEPARENT="))
    assert f"-{run_child.trace_id}-" in shell_line
    # the ZIP's tree is one tree: each child's entries hang under its own session.join root
    ids = {e.id for e in loaded.events}
    assert all(
        e.parent_id in ids for e in loaded.events if e.type not in (fmt.SESSION_START, fmt.SESSION_JOIN)
    )


def _report_environment(queue) -> None:
    queue.put((os.environ.get("TRACEPARENT"), os.environ.get("AGENT_TRACE_SESSION_ID")))


def test_a_forked_child_gets_the_variables_in_its_environ(recording, context_instrumented):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    with oat.tool("fork"):
        want = expected(recording).split("|")
        worker = ctx.Process(target=_report_environment, args=(queue,))
        worker.start()
        got = queue.get(timeout=60)
        worker.join(60)
    assert got == (want[0], recording.session_id)
    assert "TRACEPARENT" not in os.environ  # only the child's environ changed


def test_bytes_environment_gets_bytes_variables(recording, context_instrumented):
    with oat.tool("spawn"):
        want = expected(recording)
        env = {b"PATH": os.environb[b"PATH"]}
        shown = subprocess.run(["sh", "-c", SHOW], env=env, capture_output=True).stdout.decode().strip()
    assert shown == want


def test_multiprocessing_spawn_workers_get_the_context(recording, context_instrumented):
    """``multiprocessing``'s spawn start method passes no ``env``: the variables are lent to this
    process's environment for the one spawn, then taken back."""
    import multiprocessing

    names = ("TRACEPARENT", "AGENT_TRACE_SESSION_ID", "AGENT_TRACE_PARENT_SPAN", "AGENT_TRACE_DIR")
    with oat.tool("spawn"):
        want = expected(recording).rsplit("|", 1)[0]  # the tier variable aside
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            got = "|".join(pool.apply(os.getenv, (name,)) or "" for name in names)
    assert got == want
    assert not any(name in os.environ for name in names)


def test_threads_spawning_at_once_each_give_their_child_their_own_context(recording, context_instrumented):
    """Threads start children at the same moment, each under its own span (subprocess with the
    inherited environment, multiprocessing's spawn), and some under no span at all: every child
    gets its own thread's span as TRACEPARENT (none for those under no span), and this process's
    environment never holds a TRACEPARENT meanwhile (it is never changed to lend one)."""
    import multiprocessing
    import threading

    from opentelemetry import trace

    ctx = multiprocessing.get_context("spawn")
    threads_with_span, threads_without, rounds = 6, 3, 3
    barrier = threading.Barrier(threads_with_span + threads_without)
    results: dict[int, list[tuple[str, str | None, str | None]]] = {}
    errors: list[BaseException] = []
    seen_in_environ: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            value = os.environ.get("TRACEPARENT")
            if value is not None:
                seen_in_environ.append(value)

    def spawn(index: int) -> None:
        got: list[tuple[str, str | None, str | None]] = []
        try:
            queue = ctx.Queue()
            barrier.wait(60)
            for _ in range(rounds):
                if index < threads_with_span:
                    with oat.tool(f"spawn-{index}"):
                        span = trace.get_current_span().get_span_context()
                        want = f"00-{span.trace_id:032x}-{span.span_id:016x}-{int(span.trace_flags):02x}"
                        shown = subprocess.run(
                            ["sh", "-c", 'echo "$TRACEPARENT"'], capture_output=True, text=True
                        )
                        worker = ctx.Process(target=_report_environment, args=(queue,))
                        worker.start()
                        got.append((want, shown.stdout.strip(), queue.get(timeout=120)[0]))
                        worker.join(60)
                else:
                    shown = subprocess.run(
                        ["sh", "-c", 'echo "$TRACEPARENT"'], capture_output=True, text=True
                    )
                    got.append(("", shown.stdout.strip(), ""))
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)
        results[index] = got

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=spawn, args=(i,)) for i in range(threads_with_span + threads_without)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(300)
    finally:
        stop.set()
        watcher.join()
    assert not errors, errors
    assert not seen_in_environ, (
        f"os.environ held TRACEPARENT while children were spawned: {seen_in_environ[:3]}"
    )
    for index, got in sorted(results.items()):
        assert len(got) == rounds, (index, got)
        for want, from_shell, from_spawn in got:
            assert from_shell == want, f"thread {index}: a subprocess got {from_shell!r}, not {want!r}"
            if index < threads_with_span:
                assert from_spawn == want, (
                    f"thread {index}: a spawned worker got {from_spawn!r}, not {want!r}"
                )
