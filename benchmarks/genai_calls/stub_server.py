"""A minimal local OpenAI-compatible stub on 127.0.0.1 for benchmarks.

Unlike ``tests/fakes/llm_server.py`` it keeps nothing of the requests (a benchmark sends
thousands of them, some of 400 KB) and parses no request body: it reads the body and answers
with one canned response, a JSON body or a whole SSE stream, chosen by the request's ``stream``
flag (a byte search, not a JSON parse). Keep-alive for both.

Bedrock's paths are answered too (``/model/{id}/converse``: a Converse tool-call body;
``/model/{id}/converse-stream``: the same answer as an AWS event stream), for a ``boto3``
``bedrock-runtime`` client given ``endpoint_url=server.base_url``; Ollama's (``/api/chat``,
``/api/generate``: JSON or NDJSON; ``/api/embed``) and Gemini's (``…:generateContent``,
``…:streamGenerateContent``: a function call with some text, then, to a request that carries the
function's response, the answer: the two rounds of automatic function calling).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "fakes" / "recordings"


def _sse_body(recording: dict[str, Any]) -> bytes:
    body = b""
    for item in recording["sse"]:
        if item.get("event"):
            body += f"event: {item['event']}\n".encode()
        data = item["data"]
        body += b"data: " + (data if isinstance(data, str) else json.dumps(data)).encode() + b"\n\n"
    return body


class StubServer:
    """``with StubServer("openai_chat_tool_call") as s: s.url`` — serves ``{name}.json`` and
    ``{name}_stream.json`` from the test recordings."""

    def __init__(self, recording: str = "openai_chat_tool_call") -> None:
        plain = json.loads((RECORDINGS / f"{recording}.json").read_text())
        stream = json.loads((RECORDINGS / f"{recording}_stream.json").read_text())
        self.plain = json.dumps(plain["json"]).encode()
        self.stream = _sse_body(stream)
        self.bedrock, self.bedrock_stream = _bedrock_bodies()
        self.ollama, self.ollama_stream = _ollama_bodies("ollama_chat_tool_call")
        self.ollama_generate, self.ollama_generate_stream = _ollama_bodies("ollama_generate_final")
        self.ollama_embed = _json_body("ollama_embed")
        self.gemini = {  # (answering a function's response, streamed): body
            (False, False): _json_body("gemini_generate_tool_call_id"),
            (True, False): _json_body("gemini_generate_final"),
            (False, True): _sse_file("gemini_generate_tool_call_stream"),
            (True, True): _sse_file("gemini_generate_final_stream"),
        }
        self.mistral_stream = _sse_body(
            json.loads((RECORDINGS / "mistral_chat_tool_call_stream.json").read_text())
        )
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> StubServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path in ("/api/chat", "/api/generate"):  # Ollama: JSON, or one JSON object a line
                    streamed = b'"stream":true' in raw or b'"stream": true' in raw
                    if self.path == "/api/chat":
                        body = owner.ollama_stream if streamed else owner.ollama
                    else:
                        body = owner.ollama_generate_stream if streamed else owner.ollama_generate
                    kind = "application/x-ndjson" if streamed else "application/json"
                elif self.path == "/api/embed":
                    body, kind = owner.ollama_embed, "application/json"
                elif ":generateContent" in self.path or ":streamGenerateContent" in self.path:
                    # Gemini (``stream`` + capital G when streamed): the second round answers the function
                    streamed = ":streamGenerateContent" in self.path
                    body = owner.gemini[(b"functionResponse" in raw or b"function_response" in raw, streamed)]
                    kind = "text/event-stream" if streamed else "application/json"
                elif self.path.startswith("/model/"):  # Bedrock
                    streamed = self.path.endswith("/converse-stream")
                    body = owner.bedrock_stream if streamed else owner.bedrock
                    kind = "application/vnd.amazon.eventstream" if streamed else "application/json"
                else:
                    streamed = b'"stream":true' in raw or b'"stream": true' in raw
                    body = owner.stream if streamed else owner.plain
                    if streamed and "mistral" in (self.headers.get("user-agent") or ""):
                        body = owner.mistral_stream  # (its chunks: OpenAI's, without the nulls)
                    kind = "text/event-stream" if streamed else "application/json"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("x-amzn-RequestId", "req-bench")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"


def _sse_file(recording: str) -> bytes:
    return _sse_body(json.loads((RECORDINGS / f"{recording}.json").read_text()))


def _json_body(recording: str) -> bytes:
    return json.dumps(json.loads((RECORDINGS / f"{recording}.json").read_text())["json"]).encode()


def _ollama_bodies(recording: str) -> tuple[bytes, bytes]:
    """An Ollama answer (``ollama_chat_tool_call``, ``ollama_generate_final``), plain and as NDJSON."""
    plain = json.loads((RECORDINGS / f"{recording}.json").read_text())
    stream = json.loads((RECORDINGS / f"{recording}_stream.json").read_text())
    return json.dumps(plain["json"]).encode(), b"".join(
        json.dumps(x).encode() + b"\n" for x in stream["ndjson"]
    )


def _bedrock_bodies() -> tuple[bytes, bytes]:
    """Converse's tool-call body, and ConverseStream's as event-stream frames."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.fakes.llm_server import eventstream_frame

    plain = json.loads((RECORDINGS / "bedrock_converse_tool_use.json").read_text())
    stream = json.loads((RECORDINGS / "bedrock_converse_stream_tool_use.json").read_text())
    return json.dumps(plain["json"]).encode(), b"".join(map(eventstream_frame, stream["eventstream"]))
