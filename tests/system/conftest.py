"""The system layer instrumented for real (files, processes, HTTP), a real HTTP server on
127.0.0.1, and helpers that read the session file back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace.instrumentation.system.files import FilesInstrumentor
from otel_agent_trace.instrumentation.system.http import HTTPInstrumentor
from otel_agent_trace.instrumentation.system.processes import ProcessesInstrumentor
from otel_agent_trace.settings import Settings


@pytest.fixture(scope="module")
def system_layer(provider) -> Iterator[None]:
    instrumentors = [FilesInstrumentor(), ProcessesInstrumentor(), HTTPInstrumentor()]
    for inst in instrumentors:
        inst.instrument()
    yield
    for inst in instrumentors:
        inst.uninstrument()


@pytest.fixture
def session(system_layer, provider, tmp_path: Path) -> Iterator[oat.Session]:
    """A recording session (trace tier) with the system layer on."""
    directory = tmp_path / "sessions"
    s = oat.session("system", directory=directory, settings=Settings(directory=directory)).start()
    yield s
    s.stop()


@pytest.fixture
def capped_session(system_layer, provider, tmp_path: Path) -> Iterator[oat.Session]:
    directory = tmp_path / "sessions"
    settings = Settings(directory=directory, sys_events_per_span=5)
    s = oat.session("capped", directory=directory, settings=settings).start()
    yield s
    s.stop()


def entries(s: oat.Session) -> list[dict[str, Any]]:
    """Every entry of the session's trace file (readable before or after stop)."""
    with open(s.files[0], "rb") as f:
        return [orjson.loads(line) for line in f]


def tool_start(all_entries: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(e for e in all_entries if e["type"] == "span.start" and e["name"] == f"execute_tool {name}")


def events_under(all_entries: list[dict[str, Any]], span_start: dict[str, Any], name: str) -> list[dict]:
    """The ``name`` events written as children of the span whose start entry is ``span_start``."""
    return [
        e
        for e in all_entries
        if e["type"] == "span.event" and e["name"] == name and e["parent_id"] == span_start["id"]
    ]


def spans_under(all_entries: list[dict[str, Any]], span_start: dict[str, Any]) -> list[dict]:
    """The ``span.end`` entries of the direct child spans of ``span_start``'s span (an end entry
    names its parent span: a short span has no start entry)."""
    return [
        e for e in all_entries if e["type"] == "span.end" and e.get("parent_span_id") == span_start["span_id"]
    ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write (no 40 ms delayed-ACK stall)
    disable_nagle_algorithm = True

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        code = 404 if "missing" in self.path else (302 if self.path.startswith("/redirect") else 200)
        payload = b"echo:" + body
        self.send_response(code)
        if code == 302:
            self.send_header("Location", "/landed")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _reply

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
