"""A DEMO MODEL, NOT AN LLM: a local HTTP server that speaks the OpenAI chat completions API and
answers from a fixed script.

``demo_agent.py`` starts it on 127.0.0.1 (a free port) and points the real ``openai`` client at
it, so the recording has real model-call spans (model, tokens, finish reason, the tool calls asked
for) without an API key or network access. The turn it answers is the number of assistant
messages in the request: the script does not look at what the tools returned.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "demo-scripted-model"


def _tokens(value: Any) -> int:
    """A rough token count (4 characters a token), enough for a demo's usage numbers."""
    return max(1, len(json.dumps(value)) // 4)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # the demo prints nothing on stderr
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if not self.path.endswith("/chat/completions"):
            reason = f"the demo model only serves chat completions, not {self.path}"
            self._send(404, {"error": {"message": reason}})
            return
        messages = body.get("messages") or []
        answered = sum(m.get("role") == "assistant" for m in messages)
        turn = self.server.turns[min(answered, len(self.server.turns) - 1)]
        self.server.calls += 1
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("answer")}
        if "tool" in turn:
            call_id = f"call_demo_{self.server.calls:03d}"
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": turn["tool"], "arguments": json.dumps(turn["arguments"])},
                }
            ]
        prompt, completion = _tokens(messages), _tokens(message)
        self._send(
            200,
            {
                "id": f"chatcmpl-demo-{self.server.calls:03d}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": MODEL_NAME,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if "tool" in turn else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    turns: list[dict[str, Any]]
    calls: int = 0


class DemoModelServer:
    """The scripted model on ``127.0.0.1``: ``with DemoModelServer(turns) as server: server.base_url``.

    Each turn is ``{"tool": name, "arguments": {...}}`` (the model asks for a tool call) or
    ``{"answer": text}`` (the model answers and stops).
    """

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.turns = turns
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-model", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> DemoModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
