"""Work started from a tool or agent span runs under it in threads, pools and executors, with
and without opentelemetry-instrumentation-threading, and a pool worker never leaks one item's
parent into the next item."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import otel_agent_trace as oat

from .helpers import spans_of, tree


def leaf(name: str) -> str:
    with oat.tool(name):
        return name


def test_thread_and_thread_subclass_run_under_the_starting_span(recording, threads_instrumented):
    class Worker(threading.Thread):
        def run(self) -> None:  # overrides run(): still propagated
            leaf("subclass")

    with oat.agent("a"), oat.tool("spawn"):
        t = threading.Thread(target=leaf, args=("thread",))
        w = Worker()
        t.start()
        t.join()
        w.start()
        w.join()
    timer = threading.Timer(0, leaf, args=("outside",))  # started outside any span: a root
    timer.start()
    timer.join()
    files = recording.files
    recording.stop()
    assert tree(spans_of(files[0])) == [
        (
            "invoke_agent a",
            [("execute_tool spawn", [("execute_tool thread", []), ("execute_tool subclass", [])])],
        ),
        ("execute_tool outside", []),
    ]


def test_pool_submit_and_map_parent_each_item_under_its_submitter(recording, threads_instrumented):
    with ThreadPoolExecutor(max_workers=1) as pool:
        with oat.agent("a"):
            with oat.tool("first"):
                assert pool.submit(leaf, "one").result() == "one"  # the worker starts here
            with oat.tool("second"):
                assert list(pool.map(leaf, ["two", "three"])) == ["two", "three"]
        assert pool.submit(leaf, "after").result() == "after"  # same worker, no span: a root
    files = recording.files
    recording.stop()
    assert tree(spans_of(files[0])) == [
        (
            "invoke_agent a",
            [
                ("execute_tool first", [("execute_tool one", [])]),
                ("execute_tool second", [("execute_tool two", []), ("execute_tool three", [])]),
            ],
        ),
        ("execute_tool after", []),
    ]


async def test_run_in_executor_to_thread_tasks_and_gather(recording, threads_instrumented):
    loop = asyncio.get_running_loop()

    async def child(name: str) -> str:
        await asyncio.sleep(0)
        return leaf(name)

    with oat.agent("a"):
        with oat.tool("executor"):
            await loop.run_in_executor(None, leaf, "in-executor")
        with oat.tool("to-thread"):
            await asyncio.to_thread(leaf, "in-thread")
        with oat.tool("tasks"):
            task = asyncio.create_task(child("task"))
            await asyncio.gather(child("g1"), child("g2"))
            await task
    files = recording.files
    recording.stop()
    shape = tree(spans_of(files[0]))
    assert len(shape) == 1 and shape[0][0] == "invoke_agent a"
    tools = dict(shape[0][1])
    assert tools["execute_tool executor"] == [("execute_tool in-executor", [])]
    assert tools["execute_tool to-thread"] == [("execute_tool in-thread", [])]
    assert sorted(tools["execute_tool tasks"]) == [
        ("execute_tool g1", []),
        ("execute_tool g2", []),
        ("execute_tool task", []),
    ]


def test_without_our_instrumentor_a_thread_loses_its_parent(recording):
    """The control: proves the tests above test our propagation, not Python's."""
    from opentelemetry.instrumentation.threading import ThreadingInstrumentor

    upstream = ThreadingInstrumentor()
    was_on = upstream.is_instrumented_by_opentelemetry  # Strands switches it on when imported
    if was_on:
        upstream.uninstrument()
    with oat.agent("a"):
        t = threading.Thread(target=leaf, args=("orphan",))
        t.start()
        t.join()
    if was_on:
        upstream.instrument()
    files = recording.files
    recording.stop()
    assert tree(spans_of(files[0])) == [("invoke_agent a", []), ("execute_tool orphan", [])]


def test_uninstrument_removes_our_wrappers_even_under_otel_threading(provider):
    from opentelemetry.instrumentation.threading import ThreadingInstrumentor

    from otel_agent_trace.instrumentation.context import ContextInstrumentor, threads
    from otel_agent_trace.instrumentation.context._patches import PATCHES

    upstream = ThreadingInstrumentor()
    was_on = upstream.is_instrumented_by_opentelemetry
    if was_on:
        upstream.uninstrument()
    ours = ContextInstrumentor()
    ours.instrument()
    upstream.instrument()  # wraps outside ours
    ours.uninstrument()  # ours is spliced out from under theirs
    upstream.uninstrument()
    with oat.agent("a"):
        seen = []
        t = threading.Thread(target=lambda: seen.append(getattr(t, threads._ATTR, None)))
        t.start()
        t.join()
    assert seen == [None]
    ours.instrument()  # instrumenting again never stacks a second wrapper of ours
    ours.uninstrument()
    assert not PATCHES.wraps(threading.Thread, "start")
    assert not PATCHES.wraps(ThreadPoolExecutor, "submit")
    if was_on:
        upstream.instrument()
