"""Cost of the system layer: ``open()``+close, ``subprocess.run(["true"])`` and a local HTTP GET,
each unhooked vs hooked-but-no-session vs recording, side by side in one run.

An audit hook cannot be removed, so each mode lives in an interpreter of its own: one worker
process per mode, all started at once and kept alive. The driver then asks them in turn (order
rotating each round) for one short batch of an operation, so that machine noise hits every mode
alike; each mode's result is the median over rounds of its paired ratio to the unhooked worker's
batch of the same round.

Modes:
  unhooked         no instrumentation at all
  no-session       the three system instrumentors installed, no session has ever recorded
  after-session    installed, and a session recorded and stopped (the audit hook is now in place)
  recording        a session records and one tool span stays open: every operation is recorded
                   (the per-span cap is raised so that every event is written, none dropped)
  recording/100    the same with a new tool span every 100 operations (the first 128 events of
                   a span also go on the span itself)
  devduck-style    for reference: ``builtins.open`` replaced by a wrapper that appends a dict to
                   a list (the DevDuck seed's hook in essence; it sees only ``builtins.open``)
  bare-audit-hook  the mechanisms alone, doing nothing: an audit hook that returns at once,
  bare-wrapt-open  and a pass-through ``wrapt`` FunctionWrapper on ``builtins.open``

    python benchmarks/bench_system.py                    # 30 rounds
    python benchmarks/bench_system.py --rounds 60 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = (
    "unhooked",
    "no-session",
    "after-session",
    "recording",
    "recording/100",
    "devduck-style",
    "bare-audit-hook",
    "bare-wrapt-open",
)
OPS = {"open+close": 2000, "subprocess.run(true)": 10, "http GET (requests)": 50}  # per batch


# --- a worker: one interpreter, one mode, batches on request ------------------------------------------


def _worker(mode: str, url: str, workdir: str) -> None:
    import builtins

    target = os.path.join(workdir, "bench.txt")
    with open(target, "w") as f:
        f.write("x")
    # Every worker imports the same modules, hooked or not, so that only the hooks differ (a
    # bigger heap alone makes the garbage collector's full passes, and so every op, slower).
    import opentelemetry.sdk.trace  # noqa: F401
    import requests

    import otel_agent_trace as oat
    from otel_agent_trace.instrumentation.system.files import FilesInstrumentor
    from otel_agent_trace.instrumentation.system.http import HTTPInstrumentor
    from otel_agent_trace.instrumentation.system.processes import ProcessesInstrumentor
    from otel_agent_trace.settings import Settings

    tool = session = None
    if mode == "devduck-style":
        events: list[dict] = []
        real_open = builtins.open

        def devduck_open(file, mode="r", *args, **kwargs):  # the seed's hook, in essence
            events.append({"timestamp_ns": time.time_ns(), "layer": "sys", "event_type": "file.open",
                           "data": {"path": str(file), "mode": mode}})  # fmt: skip
            return real_open(file, mode, *args, **kwargs)

        builtins.open = devduck_open
    elif mode == "bare-audit-hook":
        sys.addaudithook(lambda event, args: None)
    elif mode == "bare-wrapt-open":
        import wrapt

        builtins.open = wrapt.FunctionWrapper(builtins.open, lambda wrapped, _i, a, k: wrapped(*a, **k))
    elif mode != "unhooked":
        for inst in (FilesInstrumentor(), ProcessesInstrumentor(), HTTPInstrumentor()):
            inst.instrument()
        if mode in ("after-session", "recording", "recording/100"):
            directory = os.path.join(workdir, "sessions")
            settings = Settings(directory=directory, sys_events_per_span=10**9, write_zip=False)
            session = oat.session("bench", directory=directory, settings=settings).start()
            if mode == "after-session":
                session.stop()
                session = None
            else:
                tool = oat.tool

    http = requests.Session()
    http.get(url).close()  # connect once: measure requests, not connection setup

    def op_open() -> None:
        open(target).close()

    def op_run() -> None:
        subprocess.run(["true"])

    def op_get() -> None:
        response = http.get(url)
        response.close()

    ops = dict(zip(OPS, (op_open, op_run, op_get), strict=True))
    per_span = 100 if mode == "recording/100" else None
    if tool is not None and per_span is None:
        tool("bench").__enter__()  # one tool span for the worker's whole life
    done = 0
    print("ready", flush=True)
    while line := sys.stdin.readline():  # "<op>\t<n>": run a batch, answer µs per operation
        name, count = line.rstrip("\n").split("\t")
        fn, n = ops[name], int(count)
        t0 = time.perf_counter()
        if per_span is None:
            for _ in range(n):
                fn()
            if session is not None:
                session.flush()  # what the batch queued is written inside the timing, not after
        else:
            left = n
            while left:
                batch = min(left, per_span - done % per_span)
                with tool("bench"):
                    for _ in range(batch):
                        fn()
                done += batch
                left -= batch
            if session is not None:
                session.flush()
        print((time.perf_counter() - t0) / n * 1e6, flush=True)


# --- the driver -----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write (no 40 ms delayed-ACK stall)
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON too")
    parser.add_argument("--worker", nargs=3, metavar=("MODE", "URL", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/bench"
    costs: dict[str, dict[str, list[float]]] = {m: {op: [] for op in OPS} for m in MODES}
    ratios: dict[str, dict[str, list[float]]] = {m: {op: [] for op in OPS} for m in MODES}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    with tempfile.TemporaryDirectory() as tmp:
        workers = {}
        for mode in MODES:
            workdir = os.path.join(tmp, mode.replace("/", "-"))
            os.mkdir(workdir)
            workers[mode] = subprocess.Popen(
                [sys.executable, __file__, "--worker", mode, url, workdir],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
        for worker in workers.values():
            assert worker.stdout.readline().strip() == "ready"
        for r in range(args.rounds + 1):  # round 0 warms up, not counted
            order = MODES[r % len(MODES) :] + MODES[: r % len(MODES)]
            for op, n in OPS.items():
                batch = {}
                for mode in order:
                    workers[mode].stdin.write(f"{op}\t{n}\n")
                    workers[mode].stdin.flush()
                    batch[mode] = float(workers[mode].stdout.readline())
                if r == 0:
                    continue
                for mode in MODES:
                    costs[mode][op].append(batch[mode])
                    ratios[mode][op].append(batch[mode] / batch["unhooked"])
            if r and r % 10 == 0:
                print(f"round {r}/{args.rounds} done", file=sys.stderr)
        for worker in workers.values():
            worker.stdin.close()
            worker.wait()
    server.shutdown()

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus, "
          f"{args.rounds} rounds (medians)")  # fmt: skip
    print(f"{'mode':16s}" + "".join(f"{op:>28s}" for op in OPS))
    for mode in MODES:
        cells = []
        for op in OPS:
            cost = statistics.median(costs[mode][op])
            ratio = statistics.median(ratios[mode][op])
            cells.append(f"{cost:10.1f} µs {ratio:5.2f}×")
        print(f"{mode:16s}" + "".join(f"{c:>28s}" for c in cells))
    if args.json:
        print(json.dumps({"costs_us": costs, "ratios": ratios}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
