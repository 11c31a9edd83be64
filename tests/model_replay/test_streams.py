"""Streams at the transport: a chunked body is kept chunk by chunk and streamed again chunk by
chunk (``httpx`` sync, ``httpx2`` async); past the per-exchange cap the agent still gets every
byte, the exchange is marked truncated and a replay refuses to invent it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.helpers import INSTRUMENT, clean_env

from .conftest import AGENTS, CLI, REPO, entries

CHUNKS = [f"data: part {i} {'x' * 40}\n\n" for i in range(6)]


class _Chunked(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    served: list[str] = []  # every request path, in order

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        _Chunked.served.append(self.path)
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in CHUNKS:
            data = chunk.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            time.sleep(0.03)  # each chunk reaches the client on its own
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def chunk_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chunked)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/stream"
    finally:
        server.shutdown()
        server.server_close()


def _run(
    cwd: Path, url: str, extra: dict[str, str], agent: str = "chunks.py"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INSTRUMENT, sys.executable, str(AGENTS / agent)],
        cwd=cwd,
        env=clean_env({"CHUNK_URL": url, "AGENT_TRACE_TIER": "checkpoint", **extra}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _exchanges(session: Path) -> list[dict]:
    return [
        x for e in entries(session) if e["type"] == "span.end"
        for x in (e.get("content") or {}).get("http_exchanges", [])
    ]  # fmt: skip


def _replay(cwd: Path, session: Path, url: str, agent: str = "chunks.py") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "replay", str(session), "--model-replay", "--", sys.executable, str(AGENTS / agent)],
        cwd=cwd,
        env=clean_env({"CHUNK_URL": url, "PYTHONPATH": str(REPO)}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_chunked_stream_is_kept_and_replayed_chunk_by_chunk(tmp_path, chunk_server):
    with_tool = _run(tmp_path, chunk_server, {})
    assert with_tool.returncode == 0, with_tool.stderr
    got = json.loads(with_tool.stdout)
    assert "".join(got["sync"]) == "".join(CHUNKS) and len(got["sync"]) > 1
    (session,) = (tmp_path / "agent-sessions").glob("*.checkpoint.jsonl")
    kept = _exchanges(session)
    assert [x["response"]["chunks"] for x in kept] == [got["sync"], got["async"]]
    assert all(x["response"]["complete"] and not x["response"]["truncated"] for x in kept)

    url = chunk_server
    done = _replay(tmp_path, session, url)
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout.splitlines()[0])
    assert replayed == got  # the same chunks, in the same order, one by one


def test_past_the_cap_the_agent_gets_every_byte_and_the_replay_refuses(tmp_path, chunk_server):
    done = _run(tmp_path, chunk_server, {"AGENT_TRACE_EXCHANGE_MAX_BYTES": "150"})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert "".join(got["sync"]) == "".join(CHUNKS)  # unchanged for the agent
    (session,) = (tmp_path / "agent-sessions").glob("*.checkpoint.jsonl")
    kept = _exchanges(session)
    assert kept and all(x["response"]["truncated"] and x["response"]["chunks"] == [] for x in kept)
    assert all(x["response"]["bytes"] == len("".join(CHUNKS)) for x in kept)
    replay = _replay(tmp_path, session, chunk_server)
    assert replay.returncode != 0
    assert "AGENT_TRACE_EXCHANGE_MAX_BYTES" in replay.stderr


def test_a_child_process_of_the_replayed_agent_has_its_requests_refused(tmp_path, chunk_server):
    done = _run(tmp_path, chunk_server, {}, agent="child_request.py")
    assert done.returncode == 0, done.stderr
    recorded = json.loads(done.stdout)
    assert recorded["parent"] == recorded["child"] == CHUNKS[0][:20]
    (session,) = (p for p in (tmp_path / "agent-sessions").glob("*.checkpoint.jsonl") if ".p" not in p.name)
    served = len(_Chunked.served)
    replay = _replay(tmp_path, session, chunk_server, agent="child_request.py")
    replayed = json.loads(replay.stdout.splitlines()[0])
    assert replayed == {"parent": CHUNKS[0][:20], "child": "ModelReplayRefused"}
    assert len(_Chunked.served) == served  # nothing sent, by the agent or its child
