"""An agent's run time with its OTLP backend absent, up, down, slow or hung, side by side in one run.

Each mode runs the same agent (``--spans`` tool calls under one agent span, as fast as it can)
under the real ``opentelemetry-instrument`` in a fresh process; rounds rotate the order of the
modes so that machine noise hits them alike. For each run: the agent's work (its loop, timed
inside the process: what a backend could slow down while the agent works), its exit (from the
end of the work to the end of the process: what the backend costs at exit), and the whole run.
Cells are medians over rounds. ``OTEL_BSP_EXPORT_TIMEOUT`` is left at its default (30 s).

Modes:
  absent  no OTLP exporter at all (``OTEL_TRACES_EXPORTER=agent_session``): the session file only
  up      a local OTLP/HTTP receiver that answers at once
  down    nothing listens on the port (connection refused)
  slow    a receiver that answers each request after ``--slow`` seconds (default 1)
  hung    a receiver that accepts connections and never answers

    python benchmarks/bench_backend.py                      # 3 rounds, 5000 spans
    python benchmarks/bench_backend.py --rounds 5 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

INSTRUMENT = str(Path(sys.executable).parent / "opentelemetry-instrument")
MODES = ("absent", "up", "down", "slow", "hung")

AGENT = """
import sys, time
import otel_agent_trace as oat

@oat.tool
def work(step):
    return step

start = time.perf_counter()
with oat.agent("bench"):
    for step in range(int(sys.argv[1])):
        work(step)
print(f"work {time.perf_counter() - start:.6f}", flush=True)
"""


class _Receiver:
    """A local OTLP/HTTP receiver that answers after ``delay`` seconds (200, empty response)."""

    def __init__(self, delay: float) -> None:
        outer_delay = delay

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer_delay:
                    time.sleep(outer_delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Hole:
    """Accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(endpoint: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env.pop("PYTHONPATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    if endpoint is None:
        env["OTEL_TRACES_EXPORTER"] = "agent_session"
    else:
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf")
    return env


def run_once(script: Path, workdir: Path, endpoint: str | None, spans: int) -> dict[str, float]:
    started = time.monotonic()
    proc = subprocess.Popen(
        [INSTRUMENT, sys.executable, str(script), str(spans)],
        cwd=workdir,
        env=_env(endpoint),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    work_done = time.monotonic()
    proc.wait(timeout=300)
    ended = time.monotonic()
    proc.stdout.close()
    if not line.startswith("work ") or proc.returncode != 0:
        raise RuntimeError(f"agent failed (exit {proc.returncode}): {line!r}")
    return {"work": float(line.split()[1]), "exit": ended - work_done, "total": ended - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spans", type=int, default=5000)
    parser.add_argument("--slow", type=float, default=1.0, help="seconds the slow receiver takes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    up, slow, hole = _Receiver(0), _Receiver(args.slow), _Hole()
    endpoints = {
        "absent": None,
        "up": f"http://127.0.0.1:{up.port}",
        "down": f"http://127.0.0.1:{_closed_port()}",
        "slow": f"http://127.0.0.1:{slow.port}",
        "hung": f"http://127.0.0.1:{hole.port}",
    }
    results: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-backend-") as tmp:
            script = Path(tmp) / "agent.py"
            script.write_text(AGENT)
            for r in range(args.rounds):
                order = MODES[r % len(MODES) :] + MODES[: r % len(MODES)]
                for mode in order:
                    workdir = Path(tmp) / f"{mode}-{r}"
                    workdir.mkdir()
                    results[mode].append(run_once(script, workdir, endpoints[mode], args.spans))
                    print(f"round {r + 1} {mode:6} {results[mode][-1]}", file=sys.stderr)
    finally:
        for server in (up, slow, hole):
            server.close()

    table = {
        m: {k: statistics.median(run[k] for run in results[m]) for k in ("work", "exit", "total")}
        for m in MODES
    }
    base = table["absent"]
    print(
        f"{args.spans} spans, {args.rounds} rounds, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    print("| backend | agent's work | vs absent | exit after the work | whole run |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        row = table[mode]
        print(
            f"| {mode} | {row['work']:.2f} s | {row['work'] / base['work']:.2f}× | {row['exit']:.2f} s | "
            f"{row['total']:.2f} s |"
        )
    if args.json:
        print(json.dumps({"spans": args.spans, "rounds": args.rounds, "median": table, "runs": results}))


if __name__ == "__main__":
    main()
