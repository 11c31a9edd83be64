"""A local HTTP server on 127.0.0.1 that replays recorded OpenAI and Anthropic API responses.

Real SDK clients talk to it as they would to the real API (JSON bodies and SSE streams), so
tests exercise the clients' own parsing. A recording is a JSON file under ``recordings/``::

    {"status": 200, "json": {...}}                                  # a JSON body
    {"status": 200, "sse": [{"event": "name", "data": {...}}, ...]}  # an SSE stream
    {"status": 500, "json": {"error": {...}}, "headers": {...}}      # an error
    {"status": 200, "ndjson": [{...}, ...]}                          # a JSON-lines stream (Ollama)
    {"status": 200, "eventstream": [{"event": "name", "data": {...}}, ...]}  # AWS event stream (Bedrock)

An ``eventstream`` item ``{"event": "chunk", "chunk": {...}}`` is InvokeModelWithResponseStream's
``chunk`` (its JSON base64-encoded as ``bytes``); ``{"exception": "name", "data": {...}}`` is an
error frame. Bedrock's paths (``/model/{id}/converse``, ``/converse-stream``, ``/invoke``,
``/invoke-with-response-stream``) are served from the script only (point ``boto3.client(
"bedrock-runtime", endpoint_url=server.base_url)`` at it); a response carries an
``x-amzn-RequestId`` unless the recording's headers give one.

Use :func:`llm_server` (a context manager), or ``FakeLLMServer().start()``. Point a client at
``server.openai_url`` / ``server.anthropic_url``. Responses are served from a script queued
with :meth:`FakeLLMServer.queue` (in order, whatever the path), else by route: chat
completions, responses and messages each have a default recording, streamed or not following
the request's ``stream`` flag. Every request is kept in ``server.requests``.
"""

from __future__ import annotations

import base64
import binascii
import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).parent / "recordings"

DEFAULT_ROUTES = {
    "/v1/chat/completions": ("openai_chat_text", "openai_chat_text_stream"),
    "/v1/responses": ("openai_responses_text", "openai_responses_text_stream"),
    "/v1/messages": ("anthropic_messages_text", "anthropic_messages_text_stream"),
}


def load_recording(name: str) -> dict[str, Any]:
    """A recording by file name (without ``.json``)."""
    return json.loads((RECORDINGS / f"{name}.json").read_text())


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # No Nagle: a keep-alive response written in parts would wait for the client's delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        self.server.owner.requests.append({"path": path, "body": body, "headers": dict(self.headers)})
        recording = self.server.owner.next_recording(path, body)
        if recording is None:
            self._send_json(404, {"error": {"message": f"no recording for {path}", "type": "not_found"}})
            return
        if "sse" in recording:
            self._send_sse(recording)
        elif "eventstream" in recording:
            self._send_eventstream(recording)
        elif "ndjson" in recording:
            self._send_ndjson(recording)
        else:
            self._send_json(recording.get("status", 200), recording.get("json", {}), recording.get("headers"))

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in self._aws_headers(headers).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _aws_headers(self, headers: dict[str, str] | None) -> dict[str, str]:
        """A Bedrock request gets a request id (as AWS sends one), unless the recording has one."""
        headers = dict(headers or {})
        if self.path.startswith("/model/") and not any(k.lower() == "x-amzn-requestid" for k in headers):
            headers["x-amzn-RequestId"] = "req-0000-fake"
        return headers

    def _send_eventstream(self, recording: dict[str, Any]) -> None:
        """Bedrock's streams: AWS event-stream frames (``application/vnd.amazon.eventstream``)."""
        body = b"".join(eventstream_frame(item) for item in recording["eventstream"])
        self.send_response(recording.get("status", 200))
        self.send_header("content-type", "application/vnd.amazon.eventstream")
        self.send_header("content-length", str(len(body)))
        for key, value in self._aws_headers(recording.get("headers")).items():
            self.send_header(key, value)
        if not self.server.owner.keep_alive_streams:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send_ndjson(self, recording: dict[str, Any]) -> None:
        """Ollama's stream: one JSON object a line, in one body with a content-length."""
        body = b"".join(json.dumps(item).encode() + b"\n" for item in recording["ndjson"])
        self.send_response(recording.get("status", 200))
        self.send_header("content-type", "application/x-ndjson")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_sse(self, recording: dict[str, Any]) -> None:
        # The whole event stream in one body with a content-length: the client still parses it
        # event by event. The connection closes after it, as most SSE servers do, unless the
        # server keeps streams alive (steadier timings for benchmarks). A kept-alive connection
        # pooled by a client cached across event loops (langchain-openai does) breaks the next loop.
        body = b""
        for item in recording["sse"]:
            if item.get("event"):
                body += f"event: {item['event']}\n".encode()
            data = item["data"]
            body += b"data: " + (data if isinstance(data, str) else json.dumps(data)).encode() + b"\n\n"
        self.send_response(recording.get("status", 200))
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(body)))
        if not self.server.owner.keep_alive_streams:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: fine
            pass


def _header(name: str, value: str) -> bytes:
    """One event-stream header of type string (7): name length, name, type, value length, value."""
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", 7, len(raw_value)) + raw_value


def eventstream_frame(item: dict[str, Any]) -> bytes:
    """One AWS event-stream message: prelude (total length, headers length), its CRC32, headers,
    payload, and the CRC32 of all before it (the framing botocore's ``EventStreamBuffer`` reads)."""
    if "exception" in item:
        headers = {":message-type": "exception", ":exception-type": item["exception"]}
        payload = item.get("data", {})
    elif "chunk" in item:
        headers = {":message-type": "event", ":event-type": "chunk"}
        payload = {"bytes": base64.b64encode(json.dumps(item["chunk"]).encode()).decode()}
    else:
        headers = {":message-type": "event", ":event-type": item["event"]}
        payload = item.get("data", {})
    headers[":content-type"] = "application/json"
    raw_headers = b"".join(_header(k, v) for k, v in headers.items())
    raw_payload = json.dumps(payload).encode()
    total = 12 + len(raw_headers) + len(raw_payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + raw_headers + raw_payload
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    owner: FakeLLMServer


class FakeLLMServer:
    """The replay server. ``queue()`` a script of recordings; read ``requests`` afterwards."""

    def __init__(self, *, keep_alive_streams: bool = False, host: str = "127.0.0.1") -> None:
        self.keep_alive_streams = keep_alive_streams
        self.host = host  # an IPv4 address of this machine
        self.requests: list[dict[str, Any]] = []
        self._script: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        self._httpd = _Server((self.host, 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """``base_url`` for ``openai.OpenAI`` (which appends the route to ``/v1``)."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_url(self) -> str:
        """``base_url`` for ``anthropic.Anthropic`` (which appends ``/v1/messages``)."""
        return self.base_url

    # -- script ---------------------------------------------------------------------------------

    def queue(self, *recordings: str | dict[str, Any]) -> FakeLLMServer:
        """Serve these next, in order (names of recordings, or recording dicts)."""
        with self._lock:
            for item in recordings:
                self._script.append(load_recording(item) if isinstance(item, str) else item)
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def next_recording(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        with self._lock:
            if self._script:
                return self._script.popleft()
        names = DEFAULT_ROUTES.get(path)
        if names is None:
            return None
        return load_recording(names[1] if body.get("stream") else names[0])


@contextmanager
def llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer`, stopped on exit."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
