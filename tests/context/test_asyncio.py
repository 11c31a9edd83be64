"""asyncio keeps parents (tasks, gather) and async generators never produce "Failed to detach
context" (openllmetry #3061): not when consumed in another task, not when abandoned early, not
when finalized by the event loop."""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings

import pytest

import otel_agent_trace as oat

from .helpers import spans_of, tree


@oat.tool
async def numbers(n: int):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


async def scoped_stream(n: int):
    """A user's async generator holding a tool scope open across its yields."""
    async with oat.tool("scoped"):
        for i in range(n):
            await asyncio.sleep(0)
            yield i


@pytest.fixture
def detach_errors(caplog):
    caplog.set_level(logging.DEBUG, logger="opentelemetry")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield (
            lambda: (
                [r.getMessage() for r in caplog.records if "detach" in r.getMessage().lower()]
                + [str(w.message) for w in caught if "detach" in str(w.message).lower()]
            )
        )


async def test_async_generators_abandoned_or_moved_between_tasks(recording, detach_errors):
    with oat.agent("a"):
        gen = numbers(5)
        first = await asyncio.create_task(gen.__anext__())  # started in one task
        second = await gen.__anext__()  # continued in another
        await asyncio.create_task(gen.aclose())  # closed in a third
        async for i in numbers(5):  # abandoned by break: closed by the loop's finalizer later
            if i == 1:
                break
        scoped = scoped_stream(5)
        assert await scoped.__anext__() == 0
        await asyncio.create_task(scoped.aclose())  # the scope exits in another task
    gc.collect()
    await asyncio.sleep(0.01)
    assert (first, second) == (0, 1)
    assert detach_errors() == []
    files = recording.files
    recording.stop()
    shape = tree(spans_of(files[0]))
    assert shape[0][0] == "invoke_agent a"
    assert [name for name, _ in shape[0][1]] == [
        "execute_tool numbers",
        "execute_tool numbers",
        "execute_tool scoped",
    ]


def test_event_loop_finalizes_an_abandoned_generator_quietly(recording, detach_errors):
    async def main():
        with oat.agent("a"):
            gen = scoped_stream(3)
            await gen.__anext__()
            # never closed: asyncio.run's shutdown_asyncgens finalizes it in another task

    asyncio.run(main())
    gc.collect()
    assert detach_errors() == []
