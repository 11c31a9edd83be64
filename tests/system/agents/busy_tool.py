"""An agent whose one tool touches a file, runs a command and calls a local HTTP server; run under
``opentelemetry-instrument`` with no system-layer code of its own."""

import os
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import otel_agent_trace as oat


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
workdir = Path(sys.argv[1])


@oat.tool
def busy_tool() -> int:
    (workdir / "notes.txt").write_text("hello")
    subprocess.run(["true"], check=True)
    assert os.system("exit 0") == 0
    with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/ping") as response:
        return response.status


with oat.agent("busy"):
    assert busy_tool() == 204
server.shutdown()
