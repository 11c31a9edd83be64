"""When span entries reach the file: a short span is one ``span.end`` that says it all; a span
still running is in the file within ``flush_ms`` (at once when something is written under
it, or with ``flush_ms=0``); a span's end is in the file when ``end()`` returns."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import orjson
import pytest
from opentelemetry import trace

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.settings import Settings

tracer = trace.get_tracer("tests.span_entries")


def _entries(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in open(path, "rb")]


def _named(entries: list[dict], kind: str, name: str) -> list[dict]:
    return [e for e in entries if e["type"] == kind and e.get("name") == name]


def _session(provider, directory: Path, **settings) -> oat.Session:
    return oat.session("entries", directory=directory, settings=Settings(directory=directory, **settings))


def test_a_short_span_is_one_end_entry_that_says_it_all(provider, session_dir):
    with _session(provider, session_dir) as s:
        with oat.agent("a"):
            with tracer.start_as_current_span(
                "leaf", kind=trace.SpanKind.CLIENT, attributes={"db.system": "sqlite"}
            ) as leaf:
                leaf.set_attribute("db.rows", 3)
            written = _entries(s.files[0])  # before stop: the end is in the file once end() returns
        path = s.files[0]
    assert not _named(written, fmt.SPAN_START, "leaf")
    (end,) = _named(written, fmt.SPAN_END, "leaf")
    agent_start = _named(written, fmt.SPAN_START, "invoke_agent a")[0]
    assert end["parent_id"] == agent_start["id"]  # hangs under its parent span's entry
    assert end["parent_span_id"] == agent_start["span_id"] and end["trace_id"] == agent_start["trace_id"]
    assert end["kind"] == "CLIENT" and end["layer"] == "sys"
    assert end["attributes"]["db.system"] == "sqlite" and end["attributes"]["db.rows"] == 3
    assert end["duration_ns"] >= 0

    loaded = oat.load_session(path)
    (span,) = [sp for sp in loaded.spans if sp.name == "leaf"]
    agent = next(sp for sp in loaded.spans if sp.name == "invoke_agent a")
    assert span.finished and span.parent_span_id == agent.span_id and span.kind == "CLIENT"
    assert span.parent_entry_id == agent.entry_id and span.entry_id == end["id"]
    assert span.start_ns == end["ts"] - end["duration_ns"]
    assert span.attributes["db.rows"] == 3


def test_a_running_span_reaches_the_file_within_the_window(provider, session_dir):
    with _session(provider, session_dir, flush_ms=50) as s:
        span = tracer.start_span("long", attributes={"step": 1})
        try:
            deadline = time.monotonic() + 5
            starts: list[dict] = []
            while not starts and time.monotonic() < deadline:
                time.sleep(0.02)
                starts = _named(_entries(s.files[0]), fmt.SPAN_START, "long")
            assert starts, "the flusher thread never wrote the start of a running span"
            assert starts[0]["attributes"]["step"] == 1
        finally:
            span.end()
        (end,) = _named(_entries(s.files[0]), fmt.SPAN_END, "long")
        assert end["parent_id"] == starts[0]["id"]


def test_an_entry_under_a_queued_span_writes_its_start_first(provider, session_dir):
    # flush_ms: the flusher never fires within the test
    with _session(provider, session_dir, flush_ms=60_000) as s, oat.agent("a"):
        message_id = oat.record_message("user", "hello")
        entries = _entries(s.files[0])
        (start,) = _named(entries, fmt.SPAN_START, "invoke_agent a")
        message = next(e for e in entries if e["id"] == message_id)
        assert message["parent_id"] == start["id"]
        assert entries.index(start) < entries.index(message)


def test_with_flush_ms_0_every_start_is_written_at_once(provider, session_dir):
    with _session(provider, session_dir, flush_ms=0) as s:
        with tracer.start_as_current_span("outer"), tracer.start_as_current_span("inner"):
            entries = _entries(s.files[0])
            assert [e["name"] for e in entries if e["type"] == fmt.SPAN_START] == ["outer", "inner"]
        entries = _entries(s.files[0])
    (inner_end,) = _named(entries, fmt.SPAN_END, "inner")
    assert inner_end["parent_id"] == _named(entries, fmt.SPAN_START, "inner")[0]["id"]


def test_stop_writes_the_starts_of_spans_still_running(provider, session_dir):
    s = _session(provider, session_dir, flush_ms=60_000).start()
    span = tracer.start_span("left-open")
    path = s.files[0]
    s.stop()
    span.end()
    entries = _entries(path)
    assert _named(entries, fmt.SPAN_START, "left-open")
    assert not _named(entries, fmt.SPAN_END, "left-open")
    assert entries[-1]["type"] == fmt.SESSION_END and entries[-1]["unfinished_spans"] == 1
    (span_record,) = [sp for sp in oat.load_session(path).spans if sp.name == "left-open"]
    assert not span_record.finished


@pytest.mark.parametrize("threads", [8])
def test_spans_from_many_threads_keep_every_parent_link(provider, session_dir, threads):
    """Threads starting and ending spans under one shared parent, queued starts flushed by each
    other's ends: every entry's parent is in the file before it, every span is there once."""
    per_thread = 200
    with _session(provider, session_dir) as s:
        with tracer.start_as_current_span("root") as root:
            ctx = trace.set_span_in_context(root)

            def work(n: int) -> None:
                for i in range(per_thread):
                    with (
                        tracer.start_as_current_span(f"outer-{n}", context=ctx),
                        tracer.start_as_current_span(f"inner-{n}-{i}"),
                    ):
                        pass

            workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        path = s.files[0]
    entries = _entries(path)
    seen: set[str] = set()
    for e in entries:
        assert e["parent_id"] == "" or e["parent_id"] in seen, e
        seen.add(e["id"])
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    spans = oat.load_session(path).spans
    assert len(spans) == 1 + 2 * threads * per_thread
    assert all(sp.finished for sp in spans)
    by_id = {sp.span_id: sp for sp in spans}
    for sp in spans:
        if sp.name.startswith("inner-"):
            parent = by_id[sp.parent_span_id]
            assert parent.name == "outer-" + sp.name.split("-")[1]
            assert sp.parent_entry_id == parent.entry_id  # the file's tree, not only the ids


def test_span_events_are_queued_in_order_and_bounded(provider, session_dir):
    """System-layer events of a running span are queued like its start: written in order after
    it, in batches once the queue is full (memory stays bounded), the rest with the span's end."""
    with _session(provider, session_dir, flush_ms=60_000, sys_events_per_span=10**6) as s:
        rec = s._recorder
        with tracer.start_as_current_span("busy") as span:
            for i in range(1000):
                rec.record_event(span, "file.open", {"file.path": f"/tmp/f{i}"}, sys_layer=True)
            written = _entries(s.files[0])
            events_so_far = [e for e in written if e["type"] == fmt.SPAN_EVENT]
            assert 1000 - 256 < len(events_so_far) < 1000  # full batches are out, the tail queued
        entries = _entries(s.files[0])
    (start,) = _named(entries, fmt.SPAN_START, "busy")
    events = [e for e in entries if e["type"] == fmt.SPAN_EVENT]
    assert [e["attributes"]["file.path"] for e in events] == [f"/tmp/f{i}" for i in range(1000)]
    assert all(e["parent_id"] == start["id"] and e["layer"] == "sys" for e in events)
    assert entries.index(start) < entries.index(events[0])
    (end,) = _named(entries, fmt.SPAN_END, "busy")
    assert entries.index(events[-1]) < entries.index(end) and end["parent_id"] == start["id"]


def test_an_event_of_a_running_span_reaches_the_file_within_the_window(provider, session_dir):
    with _session(provider, session_dir, flush_ms=50) as s:
        rec = s._recorder
        with tracer.start_as_current_span("waiting") as span:
            rec.record_event(span, "file.open", {"file.path": "/tmp/waited"}, sys_layer=True)
            deadline = time.monotonic() + 5
            found: list[dict] = []
            while not found and time.monotonic() < deadline:
                time.sleep(0.02)
                found = [e for e in _entries(s.files[0]) if e["type"] == fmt.SPAN_EVENT]
            assert found and found[0]["attributes"]["file.path"] == "/tmp/waited"
            assert _named(_entries(s.files[0]), fmt.SPAN_START, "waiting")


def test_the_flusher_thread_sleeps_until_needed_and_ends_with_the_session(provider, session_dir):
    def flushers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "otel-agent-trace-flush"]

    s = _session(provider, session_dir, flush_ms=20).start()
    starts = s._recorder._queue
    with tracer.start_as_current_span("first"):
        pass
    (thread,) = [t for t in flushers() if t is starts.thread]
    assert thread.daemon
    deadline = time.monotonic() + 5
    while not starts.idle and time.monotonic() < deadline:  # nothing queued: it goes idle
        time.sleep(0.02)
    assert starts.idle and not starts.items
    s.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_forked_child_never_writes_the_parents_queued_entries(provider, session_dir):
    import os

    with _session(provider, session_dir, flush_ms=60_000) as s:
        with tracer.start_as_current_span("parent-running"):
            pid = os.fork()
            if pid == 0:  # the child: one span of its own, then gone without atexit
                try:
                    with tracer.start_as_current_span("in-child"):
                        pass
                finally:
                    os._exit(0)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
        parent_file = s.files[0]
    parent = _entries(parent_file)
    children = [p for p in session_dir.glob("*.jsonl") if p != parent_file]
    assert len(children) == 1
    child = _entries(children[0])
    # The parent's queued start stays the parent's: it is written by the parent just before the
    # fork (so the child's file can hang under it), and nothing of it is in the child's file.
    assert [e["type"] for e in parent if e.get("name") == "parent-running"] == [fmt.SPAN_START, fmt.SPAN_END]
    assert not [e for e in child if e.get("name") == "parent-running"]
    assert _named(child, fmt.SPAN_END, "in-child") and not _named(parent, fmt.SPAN_END, "in-child")
    join = child[0]
    assert join["type"] == fmt.SESSION_JOIN
    assert join["parent_id"] == _named(parent, fmt.SPAN_START, "parent-running")[0]["id"]
    assert join["metadata"]["parent_span_id"] == _named(parent, fmt.SPAN_END, "parent-running")[0]["span_id"]
