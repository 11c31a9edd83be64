"""Loading a session: a generated session of ``--size-mb`` (default 100 MB) loaded whole into a
``LoadedSession`` (time, peak RSS), streamed with ``iter_entries``, and, as the floor, its lines
only split and parsed with orjson; then the hostile-input paths (a file of blank lines, a
newline-bomb ZIP) that must stay cheap.

Each measurement runs in a fresh interpreter started by a small launcher, whose
``RUSAGE_CHILDREN`` max RSS is the worker's own peak (Linux carries a process's peak RSS over
fork and exec, so a worker started from a big parent would report the parent's). Times are the
median of ``--rounds`` runs, in turn.

    python benchmarks/bench_load.py                  # 100 MB, 3 rounds
    python benchmarks/bench_load.py --size-mb 300 --rounds 5 --json
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
import zipfile
from pathlib import Path

import orjson

_WORKERS = {
    "load_session": """
import sys, time
from otel_agent_trace.offline import load_session
t = time.perf_counter()
s = load_session(sys.argv[1], max_entries=None)
loaded = time.perf_counter() - t
spans = len(s.spans)  # built on first use
print(loaded, len(s.events), spans, time.perf_counter() - t - loaded)
""",
    "iter_entries": """
import sys, time
from otel_agent_trace.offline import iter_entries
t = time.perf_counter()
n = sum(1 for _ in iter_entries(sys.argv[1]))
print(time.perf_counter() - t, n, 0, 0)
""",
    "orjson_lines": """
import sys, time, orjson
t = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            orjson.loads(line)
            n += 1
print(time.perf_counter() - t, n, 0, 0)
""",
    "refused": """
import sys, time
from otel_agent_trace.offline import load_session
from otel_agent_trace.session_format import SessionFormatError
t = time.perf_counter()
try:
    load_session(sys.argv[1], max_entries=None)
except SessionFormatError:
    pass
print(time.perf_counter() - t, 0, 0, 0)
""",
}

_LAUNCHER = """
import json, resource, subprocess, sys
done = subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], capture_output=True, text=True)
if done.returncode:
    sys.exit(done.stderr)
seconds, entries, spans, spans_seconds = done.stdout.split()
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": float(seconds), "entries": int(entries), "spans": int(spans),
                  "spans_seconds": float(spans_seconds), "rss_mb": rss}))
"""


def generate(path: Path, size_mb: int) -> int:
    """A session like a recorded agent run: turns of a model call (start, messages, end with
    token counts) and tool calls with file events, ~250 bytes a line; no ``session.end``."""
    prefix = "bench000"
    ts = 1_795_942_143_000_000_000
    seq = 0
    target = size_mb * 1_000_000
    written = 0

    def entry(entry_type: str, parent: str, layer: str, **fields: object) -> str:
        nonlocal seq, ts, written
        entry_id = f"{prefix}-{seq:04d}"
        seq += 1
        ts += 1_000_000
        line = orjson.dumps(
            {"id": entry_id, "parent_id": parent, "type": entry_type, "layer": layer, "ts": ts, **fields}
        )
        out.write(line + b"\n")
        written += len(line) + 1
        return entry_id

    with open(path, "wb") as out:
        root = entry(
            "session.start",
            "",
            "agent",
            session_id="session-bench",
            tier="trace",
            metadata={"format": "otel-agent-trace/session", "format_version": "1.1"},
        )
        turn = 0
        while written < target:
            turn += 1
            span = f"{turn:016x}"
            start = entry(
                "span.start",
                root,
                "agent",
                name="chat gpt-4o",
                kind="CLIENT",
                trace_id="ab" * 16,
                span_id=span,
            )
            messages = [
                entry(
                    "message",
                    start,
                    "agent",
                    role=role,
                    content_sha256=f"{turn:064x}",
                    content_chars=120 + turn % 50,
                    span_id=span,
                )
                for role in ("user", "assistant")
            ]
            entry(
                "span.end",
                start,
                "agent",
                name="chat gpt-4o",
                trace_id="ab" * 16,
                span_id=span,
                duration_ns=900_000,
                status={"code": "UNSET"},
                attributes={"gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30},
                content={"input_message_ids": messages[:1], "output_message_ids": messages[1:]},
            )
            tool_span = f"{turn:08x}{0:08x}"
            tool = entry(
                "span.start",
                root,
                "tool",
                name="execute_tool read_file",
                trace_id="ab" * 16,
                span_id=tool_span,
                attributes={"gen_ai.tool.call.id": f"call_{turn}"},
            )
            for i in range(2):
                entry(
                    "span.event",
                    tool,
                    "sys",
                    name="file.open",
                    trace_id="ab" * 16,
                    span_id=tool_span,
                    attributes={"file.path": f"/work/src/module_{turn % 97}_{i}.py", "file.mode": "r"},
                )
            entry(
                "span.end",
                tool,
                "tool",
                name="execute_tool read_file",
                trace_id="ab" * 16,
                span_id=tool_span,
                duration_ns=200_000,
                status={"code": "OK"},
                content={"tool_result": "x" * 80},
            )
    return written


def measure(worker: str, path: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, _WORKERS[worker], str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        session = Path(tmp) / "session-bench.jsonl"
        size = generate(session, args.size_mb)
        blanks = Path(tmp) / "blanks.jsonl"
        with open(blanks, "wb") as out:
            out.write(session.open("rb").readline())
            for _ in range(250):
                out.write(b"\n" * (1 << 20))
        bomb = Path(tmp) / "newlines.zip"
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            zf.writestr("events.jsonl", b"\n" * (250 << 20))
        cases = [
            ("load_session", session),
            ("iter_entries", session),
            ("orjson_lines", session),
            ("iter_entries", blanks),
            ("refused", bomb),
        ]
        runs: dict[str, list[dict[str, float]]] = {f"{w}:{p.name}": [] for w, p in cases}
        for _ in range(args.rounds):
            for worker, path in cases:
                runs[f"{worker}:{path.name}"].append(measure(worker, path))
        results = {}
        floor = runs["orjson_lines:session-bench.jsonl"]
        for (_worker, path), key in zip(cases, runs, strict=True):
            got = runs[key]
            seconds = statistics.median(r["seconds"] for r in got)
            same_file = path == session
            results[key] = {
                "file": path.name,
                "file_mb": round(path.stat().st_size / 1e6, 1),
                "seconds": round(seconds, 3),
                "mb_per_s": round(path.stat().st_size / 1e6 / seconds, 1) if seconds else None,
                # paired: this run's time over the orjson-only pass of the same round
                "x_orjson": round(
                    statistics.median(r["seconds"] / f["seconds"] for r, f in zip(got, floor, strict=True)), 2
                )
                if same_file
                else None,
                "spans_seconds": round(statistics.median(r["spans_seconds"] for r in got), 3),
                "entries": got[0]["entries"],
                "spans": got[0]["spans"],
                "peak_rss_mb": round(max(r["rss_mb"] for r in got), 1),
            }
    report = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "session_bytes": size,
        "rounds": args.rounds,
        "results": results,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"python {report['python']}, {report['cpus']} cpus, {args.rounds} rounds (median time, max RSS)")
    print(f"{'what':34} {'MB':>7} {'s':>8} {'MB/s':>8} {'x orjson':>9} {'entries':>9} {'peak RSS MB':>12}")
    for key, r in results.items():
        print(
            f"{key:34} {r['file_mb']:>7} {r['seconds']:>8} {r['mb_per_s'] or '':>8} {r['x_orjson'] or '':>9} "
            f"{r['entries']:>9} {r['peak_rss_mb']:>12}"
        )
    spans = results["load_session:session-bench.jsonl"]
    print(f"then .spans ({spans['spans']} spans) on first use: {spans['spans_seconds']} s")


if __name__ == "__main__":
    main()
