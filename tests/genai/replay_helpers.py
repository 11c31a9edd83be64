"""Model replay in the test's own process: record a run (checkpoint tier, the exchanges kept at
the HTTP transport) against a local server of its own, stop that server, and run the same code
again under ``model_replay()`` — and the same run with and without our instrumentation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import otel_agent_trace as oat
from otel_agent_trace.model_replay import model_replay
from tests.fakes.llm_server import FakeLLMServer


@contextmanager
def exchanges_kept() -> Iterator[None]:
    """The transport hooks that keep and answer exchanges (``opentelemetry-instrument`` installs
    them at start-up; a test installs them itself)."""
    from otel_agent_trace.instrumentation.system.http import _exchange

    _exchange.install("tests.genai")
    try:
        yield
    finally:
        _exchange.uninstall("tests.genai")


def record_then_replay(
    directory: Path, script: tuple[str | dict[str, Any], ...], run: Callable[[str], Any]
) -> tuple[Any, Any, dict[str, Any], Path]:
    """``run(base_url)`` recorded against a server answering ``script``, then run again with the
    server stopped, answered from the recording: (recorded output, replayed output, the replay's
    report, the checkpoint file)."""
    with exchanges_kept():
        with FakeLLMServer() as server:
            server.queue(*script)
            base_url = server.base_url
            session = oat.session("replayed", directory=directory, tier="checkpoint").start()
            try:
                recorded = run(base_url)
            finally:
                session.stop()
            assert len(server.requests) == len(script)
        (path,) = directory.glob("*.checkpoint.jsonl")
        with model_replay(path) as player:
            replayed = run(base_url)
    return recorded, replayed, player.report(), path


def exchange_holders(path: Path) -> list[str]:
    """The names of the spans whose entries hold the recorded HTTP exchanges, in file order."""
    from tests.genai.genai_helpers import entries

    ends = [e for e in entries(path) if e["type"] == "span.end" and isinstance(e.get("content"), dict)]
    return [e["name"] for e in ends if e["content"].get("http_exchanges")]
