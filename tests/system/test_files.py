"""File activity is recorded under the tool span that caused it, whatever the path to it; the
interpreter's own reads, the recorder's own writes and anything outside a session are not."""

from __future__ import annotations

import builtins
import contextvars
import importlib
import io
import linecache
import os
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import otel_agent_trace as oat
from otel_agent_trace._internal.guard import own_io
from otel_agent_trace.instrumentation.system.files import FilesInstrumentor

from .conftest import entries, events_under, tool_start


def _opens(s, tool: str) -> dict[str, list[dict]]:
    """file.open events under the tool span, by path."""
    all_entries = entries(s)
    out: dict[str, list[dict]] = {}
    for e in events_under(all_entries, tool_start(all_entries, tool), "file.open"):
        out.setdefault(e["attributes"]["file.path"], []).append(e["attributes"])
    return out


@pytest.mark.parametrize(
    "how, access, create",
    [
        ("open-read", "read", False),
        ("open-write", "write", True),
        ("io.open-append", "write", True),
        ("path.open-rw", "read_write", False),
        ("read_text", "read", False),
        ("write_text", "write", True),
        ("read_bytes", "read", False),
        ("write_bytes", "write", True),
        ("os.open-creat", "write", True),
        ("os.open-rdonly", "read", False),
    ],
)
def test_every_way_of_opening_is_one_event_under_the_tool(session, tmp_path, how, access, create):
    target = tmp_path / "data.txt"
    target.write_bytes(b"hello")  # before the tool: not under it

    def touch_file() -> object:
        if how == "open-read":
            with open(target) as f:
                return f.read()
        if how == "open-write":
            with open(str(target), "w") as f:
                return f.write("x")
        if how == "io.open-append":
            with io.open(target, "a") as f:  # noqa: UP020 - io.open is the point here
                return f.write("x")
        if how == "path.open-rw":
            with target.open("r+") as f:
                return f.read()
        if how == "read_text":
            return target.read_text()
        if how == "write_text":
            return target.write_text("x")
        if how == "read_bytes":
            return target.read_bytes()
        if how == "write_bytes":
            return target.write_bytes(b"x")
        flags = os.O_WRONLY | os.O_CREAT if how == "os.open-creat" else os.O_RDONLY
        fd = os.open(target, flags)
        os.close(fd)
        return fd

    with oat.tool("touch_file"):
        touch_file()
    opens = _opens(session, "touch_file")
    assert list(opens) == [str(target)]
    assert len(opens[str(target)]) == 1
    attrs = opens[str(target)][0]
    assert attrs["agent_trace.file.access"] == access
    assert attrs["agent_trace.file.create"] is create
    assert "error.type" not in attrs
    assert "agent_trace.file.seen_by" not in attrs  # a wrapper saw it: the outcome is known


def test_relative_paths_are_recorded_absolute(session, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with oat.tool("relative"):
        Path("rel.txt").write_text("x")
    assert str(tmp_path / "rel.txt") in _opens(session, "relative")


def test_failed_opens_are_recorded_and_the_error_reaches_the_caller_unchanged(session, tmp_path):
    missing = tmp_path / "missing.txt"
    directory = tmp_path / "adir"
    directory.mkdir()
    with oat.tool("failing"):
        with pytest.raises(FileNotFoundError) as not_found:
            open(missing)  # noqa: SIM115
        with pytest.raises(IsADirectoryError):
            open(directory, "w")  # noqa: SIM115
        with pytest.raises(FileNotFoundError):
            os.open(tmp_path / "no" / "such", os.O_RDONLY)
    assert not_found.value.filename == str(missing) and not_found.value.errno == 2
    opens = _opens(session, "failing")
    assert opens[str(missing)][0]["error.type"] == "FileNotFoundError"
    assert opens[str(directory)][0]["error.type"] == "IsADirectoryError"
    assert opens[str(tmp_path / "no" / "such")][0]["error.type"] == "FileNotFoundError"


def test_open_returns_what_it_always_returns(session, tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"abc")
    with oat.tool("types"):
        with open(target, "rb") as f:
            assert type(f) is io.BufferedReader and f.read() == b"abc"
        with open(target, encoding="latin-1") as f:
            assert type(f) is io.TextIOWrapper and f.encoding == "latin-1"
        fd = os.open(target, os.O_RDONLY)
        assert isinstance(fd, int)
        os.close(fd)


def test_deletes_renames_and_directories_are_their_own_events(session, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    tree = tmp_path / "tree"
    with oat.tool("shuffle"):
        a.write_text("1")
        os.rename(a, b)
        os.replace(b, a)
        os.remove(a)
        os.mkdir(tree)
        for i in range(5):
            (tree / f"{i}.txt").write_text("x")
        shutil.rmtree(tree)
        with pytest.raises(FileNotFoundError):
            os.unlink(tmp_path / "gone")
    all_entries = entries(session)
    start = tool_start(all_entries, "shuffle")
    rn = [e["attributes"] for e in events_under(all_entries, start, "file.rename")]
    moves = [(r["file.path"], r["agent_trace.file.new_path"], r["agent_trace.file.operation"]) for r in rn]
    assert moves == [
        (str(a), str(b), "rename"),
        (str(b), str(a), "replace"),
    ]
    deletes = [e["attributes"] for e in events_under(all_entries, start, "file.delete")]
    assert [(d["file.path"], d["agent_trace.file.operation"]) for d in deletes] == [
        (str(a), "unlink"),
        (str(tree), "rmtree"),  # one event for the whole tree, not one per file inside it
        (str(tmp_path / "gone"), "unlink"),
    ]
    assert deletes[-1]["error.type"] == "FileNotFoundError"
    mkdirs = events_under(all_entries, start, "file.mkdir")
    assert [e["attributes"]["file.path"] for e in mkdirs] == [str(tree)]


def test_the_audit_hook_sees_opens_no_wrapper_names(session, tmp_path):
    target = tmp_path / "raw.bin"
    target.write_bytes(b"x")
    with oat.tool("raw"):
        io.FileIO(target).close()  # a C-level open that no patch of open() sees
    opens = _opens(session, "raw")
    assert opens[str(target)] == [
        {
            "file.path": str(target),
            "agent_trace.file.seen_by": "audit",
            "agent_trace.file.mode": "r",
            "agent_trace.file.access": "read",
            "agent_trace.file.create": False,
        }
    ]


def test_interpreter_housekeeping_is_not_recorded(session, tmp_path, monkeypatch):
    package = tmp_path / "freshly_imported_mod.py"
    package.write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with oat.tool("imports"):
        module = importlib.import_module("freshly_imported_mod")  # source read + .pyc write
        assert module.VALUE == 42
        assert linecache.getline(str(package), 1) == "VALUE = 42\n"
    sys.modules.pop("freshly_imported_mod", None)
    all_entries = entries(session)
    recorded = [e for e in all_entries if e["type"] == "span.event" and e["name"].startswith("file.")]
    assert not [e for e in recorded if str(tmp_path) in e["attributes"]["file.path"]], recorded
    assert list((tmp_path / "__pycache__").glob("*.pyc"))  # the import did write its .pyc, unrecorded


def test_the_recorders_own_io_and_the_sessions_directory_are_not_recorded(session, tmp_path):
    sessions_dir = session.files[0].parent
    with oat.tool("own"):
        with own_io():
            (tmp_path / "own.txt").write_text("ours")
        (sessions_dir / "notes.txt").write_text("in the sessions directory")
        (tmp_path / "theirs.txt").write_text("the agent's")
    assert list(_opens(session, "own")) == [str(tmp_path / "theirs.txt")]


def test_nothing_is_recorded_outside_a_session(system_layer, memory_exporter, tmp_path):
    with oat.tool("no_session"):
        (tmp_path / "x.txt").write_text("x")
        open(tmp_path / "x.txt").close()
    (span,) = memory_exporter.get_finished_spans()
    assert span.events == ()


def test_events_from_a_thread_the_tool_started_belong_to_the_tool(session, tmp_path):
    def work(i: int) -> None:
        (tmp_path / f"thread-{i}.txt").write_text("x")

    with oat.tool("threaded"):
        ctx = contextvars.copy_context()
        t = threading.Thread(target=ctx.run, args=(work, 1))
        t.start()
        t.join()
    assert str(tmp_path / "thread-1.txt") in _opens(session, "threaded")


def test_events_from_a_thread_pool_belong_to_the_tool_with_context_propagation(session, tmp_path):
    from otel_agent_trace.instrumentation.context import ContextInstrumentor

    inst = ContextInstrumentor()
    already = inst.is_instrumented_by_opentelemetry
    if not already:
        inst.instrument()
    try:
        with oat.tool("pooled"), ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda i: (tmp_path / f"pool-{i}.txt").write_text("x"), range(3)))
    finally:
        if not already:
            inst.uninstrument()
    opens = _opens(session, "pooled")
    assert {str(tmp_path / f"pool-{i}.txt") for i in range(3)} <= set(opens)


def test_a_tool_opening_many_files_is_capped_and_the_drops_counted(capped_session, memory_exporter, tmp_path):
    target = tmp_path / "many.txt"
    target.write_text("x")
    with oat.tool("flood"):
        for _ in range(40):
            open(target).close()
    all_entries = entries(capped_session)
    start = tool_start(all_entries, "flood")
    assert len(events_under(all_entries, start, "file.open")) == 5
    end = next(e for e in all_entries if e["type"] == "span.end" and e["span_id"] == start["span_id"])
    assert end["attributes"]["agent_trace.sys_events.dropped"] == 35
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool flood"]
    assert span.attributes["agent_trace.sys_events.dropped"] == 35
    assert len([e for e in span.events if e.name == "file.open"]) == 5


def test_uninstrument_puts_the_originals_back(system_layer):
    inst = FilesInstrumentor()
    patched = builtins.open
    inst.uninstrument()
    try:
        assert builtins.open is io.open is not patched
        assert getattr(builtins.open, "__wrapped__", None) is None
        assert getattr(os.open, "__wrapped__", None) is None
        assert os.open in os.supports_dir_fd
    finally:
        inst.instrument()
    assert getattr(builtins.open, "__wrapped__", None) is not None
    assert os.open in os.supports_dir_fd  # the wrapper stands in for the original in these sets


def test_the_patched_open_is_one_object_that_pickles_and_introspects_like_the_original(system_layer):
    import inspect
    import pickle

    assert builtins.open is io.open
    assert pickle.loads(pickle.dumps(builtins.open)) is builtins.open
    assert open.__name__ == "open" and "file" in inspect.signature(open).parameters


def test_a_flood_with_the_default_cap_writes_a_bounded_file_and_span(session, memory_exporter, tmp_path):
    target = tmp_path / "flood.txt"
    target.write_text("x")
    with oat.tool("big_flood"):
        for _ in range(5000):
            with open(target):
                pass
    all_entries = entries(session)
    start = tool_start(all_entries, "big_flood")
    assert len(events_under(all_entries, start, "file.open")) == 1000  # AGENT_TRACE_SYS_EVENTS_PER_SPAN
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool big_flood"]
    assert span.attributes["agent_trace.sys_events.dropped"] == 4000
    assert len(span.events) == 128  # the SDK's per-span event limit: the rest is in the file only
    assert span.dropped_events == 0  # nothing evicted: events past the limit were never added
