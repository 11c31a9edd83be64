"""Speed and memory of ``analyze`` on a large session, and of ``analyze-dir`` on many small ones.

One run, side by side:

* **parse**: only ``orjson.loads`` of every line of the file (the floor any reader pays);
* **analyze**: ``otel_agent_trace.offline.analysis.analyze_session`` on the same file (the
  reader, then the one-pass checklist).

Each is timed inside a fresh subprocess (interpreter start not counted), rounds alternate which
goes first, and the result is the median MB/s of each and the median of the per-round ratios
analyze / parse. The analyze subprocess's peak RSS (``ru_maxrss``) is its memory. Then
``analyze-dir``'s work over N small sessions with 1 process and with one per core.

    python benchmarks/bench_analyze.py                       # a 1 GB session, 3 rounds, 1000 small ones
    python benchmarks/bench_analyze.py --size-mb 50 --rounds 3 --sessions 200

The generated session is a realistic mix, written as the recorder writes it: per model turn a
``chat`` span (tokens, finish reasons, message ids), two messages, a tool span with its start,
a file event and 0.3-3 KB of arguments and result, a process span every fifth tool call, a
snapshot every tenth turn, some failures and repeated calls. Files go in a temporary directory,
deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

START_NS = 1_796_000_000_000_000_000
SID = "session-20261201-000000-bench000"

PARSE = """
import sys, time, resource, orjson
t, c = time.perf_counter(), time.process_time()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        orjson.loads(line)
        n += 1
print(time.perf_counter() - t, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time() - c)
"""

READ = """
import sys, time, resource
from otel_agent_trace import session_format as fmt
t, c = time.perf_counter(), time.process_time()
n = sum(1 for _ in fmt.iter_entries(sys.argv[1], []))
print(time.perf_counter() - t, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time() - c)
"""

ANALYZE = """
import sys, time, resource
from otel_agent_trace.offline.analysis import analyze_session
t, c = time.perf_counter(), time.process_time()
r = analyze_session(sys.argv[1])
n = r["entries"]
print(time.perf_counter() - t, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time() - c)
"""

HTML = """
import sys, time, resource, os
from otel_agent_trace.offline.html import write_html
t, c = time.perf_counter(), time.process_time()
out = write_html(sys.argv[1], sys.argv[1] + ".html")
size = os.path.getsize(out)
os.unlink(out)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(time.perf_counter() - t, size, peak, time.process_time() - c)
"""


def _entry(seq: int, parent: str, etype: str, layer: str, ts: int, /, **fields: object) -> bytes:
    entry = {
        "id": f"bench000-{seq:04d}",
        "parent_id": parent,
        "type": etype,
        "layer": layer,
        "ts": ts,
        **fields,
    }
    return orjson.dumps(entry) + b"\n"


def write_session(path: Path, size: int, rng: random.Random) -> int:
    """A session file of about ``size`` bytes; returns the number of entries."""
    seq = 0
    ts = START_NS
    words = [
        "the",
        "function",
        "returns",
        "a",
        "list",
        "of",
        "files",
        "in",
        "the",
        "directory",
        "and",
        "tests",
        "pass",
    ]
    with open(path, "wb", buffering=1 << 20) as out:
        meta = {
            "session_id": SID,
            "format": "otel-agent-trace/session",
            "format_version": "1.1",
            "argv": ["a.py"],
        }
        out.write(_entry(seq, "", "session.start", "agent", ts, session_id=SID, tier="trace", metadata=meta))
        root = "bench000-0000"
        seq += 1
        agent = f"bench000-{seq:04d}"
        agent_span = "a" * 16
        attrs_agent = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "bench",
            "session.id": SID,
        }
        out.write(
            _entry(
                seq,
                root,
                "span.start",
                "agent",
                ts,
                name="invoke_agent bench",
                kind="INTERNAL",
                trace_id="b" * 32,
                span_id=agent_span,
                parent_span_id=None,
                attributes=attrs_agent,
            )
        )
        written = out.tell()
        turn = 0
        while written < size:
            turn += 1
            tool = rng.choice(("read_file", "write_file", "run_shell", "search", "list_files"))
            args = {
                "path": f"src/module_{rng.randrange(50)}.py",
                "query": " ".join(rng.choices(words, k=rng.randrange(5, 60))),
            }
            if turn % 37 == 0:
                args = {"path": "src/same.py"}  # a call the agent repeats
            for role in ("assistant", "tool"):
                seq += 1
                ts += 1_000_000
                out.write(
                    _entry(
                        seq,
                        agent,
                        "message",
                        "agent",
                        ts,
                        digest=f"{seq:064x}",
                        span_id=agent_span,
                        role=role,
                        content_chars=rng.randrange(50, 4000),
                        content_sha256=f"{seq:064x}",
                    )
                )
            seq += 1
            ts += 20_000_000
            error = turn % 53 == 0
            chat_attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "session.id": SID,
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.id": f"chatcmpl-{turn}",
                "gen_ai.usage.input_tokens": rng.randrange(500, 9000),
                "gen_ai.usage.output_tokens": rng.randrange(5, 400),
                "gen_ai.response.finish_reasons": ["tool_calls"],
                "agent_trace.tool_calls.ids": [f"call_{turn}"],
                "agent_trace.tool_calls.names": [tool],
            }
            out.write(
                _entry(
                    seq,
                    agent,
                    "span.end",
                    "agent",
                    ts,
                    name="chat gpt-4o-mini",
                    kind="CLIENT",
                    trace_id="b" * 32,
                    span_id=f"{seq:016x}",
                    parent_span_id=agent_span,
                    duration_ns=rng.randrange(10**8, 3 * 10**9),
                    status={"code": "ERROR", "description": "RateLimitError: 429"}
                    if error
                    else {"code": "UNSET"},
                    attributes=chat_attrs,
                    content={
                        "input_message_ids": [f"bench000-{max(seq - i, 2):04d}" for i in range(1, 9)],
                        "output_message_ids": [f"bench000-{seq - 1:04d}"],
                    },
                )
            )
            seq += 1
            tool_start = f"bench000-{seq:04d}"
            tool_span = f"{seq:016x}"
            tool_attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.type": "function",
                "agent_trace.tool.import_path": f"agent:{tool}",
                "session.id": SID,
            }
            out.write(
                _entry(
                    seq,
                    agent,
                    "span.start",
                    "tool",
                    ts,
                    name=f"execute_tool {tool}",
                    kind="INTERNAL",
                    trace_id="b" * 32,
                    span_id=tool_span,
                    parent_span_id=agent_span,
                    attributes=tool_attrs,
                )
            )
            seq += 1
            out.write(
                _entry(
                    seq,
                    tool_start,
                    "span.event",
                    "sys",
                    ts + 1000,
                    name="file.open",
                    trace_id="b" * 32,
                    span_id=tool_span,
                    attributes={
                        "file.path": args["path"],
                        "agent_trace.file.mode": "r",
                        "agent_trace.file.access": "read",
                    },
                )
            )
            if turn % 5 == 0:
                seq += 1
                command = ["/bin/sh", "-c", "python -m pytest -q" if turn % 10 == 0 else "ls -la src"]
                out.write(
                    _entry(
                        seq,
                        tool_start,
                        "span.end",
                        "sys",
                        ts + 5_000_000,
                        name="process sh",
                        kind="INTERNAL",
                        trace_id="b" * 32,
                        span_id=f"{seq:016x}",
                        parent_span_id=tool_span,
                        duration_ns=4_000_000,
                        status={"code": "UNSET"},
                        attributes={
                            "process.command_args": command,
                            "process.executable.name": "sh",
                            "process.pid": 1000 + turn,
                            "process.exit.code": 1 if turn % 30 == 0 else 0,
                        },
                    )
                )
            seq += 1
            ts += 30_000_000
            result = " ".join(rng.choices(words, k=rng.randrange(40, 400)))
            out.write(
                _entry(
                    seq,
                    tool_start,
                    "span.end",
                    "tool",
                    ts,
                    name=f"execute_tool {tool}",
                    kind="INTERNAL",
                    trace_id="b" * 32,
                    span_id=tool_span,
                    parent_span_id=agent_span,
                    duration_ns=30_000_000,
                    status={"code": "UNSET"},
                    attributes=tool_attrs,
                    content={"tool_arguments": args, "tool_result": result[:500]},
                )
            )
            if turn % 10 == 0:
                seq += 1
                out.write(
                    _entry(
                        seq,
                        agent,
                        "snapshot",
                        "agent",
                        ts,
                        snapshot_id=turn // 10,
                        description=f"turn {turn}",
                        auto=True,
                        message_ids=[f"bench000-{i:04d}" for i in range(2, 12)],
                        messages_count=10,
                        system_prompt={"chars": 2000, "sha256": "0" * 64},
                        model_info={"model_id": "gpt-4o-mini"},
                    )
                )
            written = out.tell()
        seq += 1
        out.write(
            _entry(
                seq,
                root,
                "span.end",
                "agent",
                ts,
                name="invoke_agent bench",
                kind="INTERNAL",
                trace_id="b" * 32,
                span_id=agent_span,
                parent_span_id=None,
                duration_ns=ts - START_NS,
                status={"code": "UNSET"},
                attributes=attrs_agent,
            )
        )
        seq += 1
        out.write(
            _entry(seq, root, "session.end", "agent", ts, duration_ns=ts - START_NS, unfinished_spans=0)
        )
    return seq + 1


def _run(code: str, path: Path) -> tuple[float, int, float, float]:
    """``(wall seconds, entries, peak RSS MB, CPU seconds)`` of one measurement in a fresh process."""
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    seconds, entries, rss_kb, cpu = done.stdout.split()
    return float(seconds), int(entries), int(rss_kb) / 1024, float(cpu)


def bench_large(directory: Path, size_mb: int, rounds: int, rng: random.Random) -> dict[str, object]:
    path = directory / "large.jsonl"
    t = time.perf_counter()
    entries = write_session(path, size_mb * 1_000_000, rng)
    generated = time.perf_counter() - t
    mb = path.stat().st_size / 1e6
    _run(PARSE, path)  # warm the page cache
    parse, read, analyze, ratios, read_ratios, rss, parse_rss = [], [], [], [], [], [], []
    cpu_ratios, cpu_read_ratios = [], []
    orders = [(PARSE, READ, ANALYZE), (ANALYZE, READ, PARSE), (READ, ANALYZE, PARSE)]
    for r in range(rounds):
        times, cpu = {}, {}
        for code in orders[r % len(orders)]:
            seconds, n, peak, cpu[code] = _run(code, path)
            times[code] = seconds
            if code is not PARSE:
                assert n == entries, (n, entries)
            if code is ANALYZE:
                rss.append(peak)
            elif code is PARSE:
                parse_rss.append(peak)
        parse.append(mb / times[PARSE])
        read.append(mb / times[READ])
        analyze.append(mb / times[ANALYZE])
        ratios.append(times[PARSE] / times[ANALYZE])
        read_ratios.append(times[PARSE] / times[READ])
        cpu_ratios.append(cpu[PARSE] / cpu[ANALYZE])
        cpu_read_ratios.append(cpu[PARSE] / cpu[READ])
        print(
            f"  round {r + 1}: parse {parse[-1]:.0f} MB/s, read {read[-1]:.0f} MB/s, "
            f"analyze {analyze[-1]:.0f} MB/s, "
            f"ratio {ratios[-1]:.2f} (CPU time {cpu_ratios[-1]:.2f}), analyze peak RSS {rss[-1]:.0f} MB",
            file=sys.stderr,
        )
    html_s, html_bytes, html_rss, _ = _run(HTML, path)
    path.unlink()
    return {
        "html_s": round(html_s, 1),
        "html_page_mb": round(html_bytes / 1e6, 1),
        "html_peak_rss_mb": round(html_rss, 1),
        "file_mb": round(mb, 1),
        "entries": entries,
        "generate_s": round(generated, 1),
        "parse_mb_s": round(statistics.median(parse), 1),
        "read_mb_s": round(statistics.median(read), 1),
        "read_vs_parse": round(statistics.median(read_ratios), 3),
        "analyze_mb_s": round(statistics.median(analyze), 1),
        "analyze_vs_parse": round(statistics.median(ratios), 3),
        "analyze_vs_parse_cpu": round(statistics.median(cpu_ratios), 3),
        "read_vs_parse_cpu": round(statistics.median(cpu_read_ratios), 3),
        "analyze_peak_rss_mb": round(max(rss), 1),
        "parse_peak_rss_mb": round(max(parse_rss), 1),
    }


def bench_dir(directory: Path, sessions: int, rng: random.Random) -> dict[str, object]:
    from otel_agent_trace.offline.analysis import analyze_many, find_sessions

    many = directory / "many"
    many.mkdir()
    for n in range(sessions):
        write_session(many / f"session-20261201-000000-{n:08x}.jsonl", rng.randrange(20_000, 200_000), rng)
    paths = find_sessions(many)
    assert len(paths) == sessions
    total_mb = sum(p.stat().st_size for p in paths) / 1e6
    cores = os.cpu_count() or 1
    out: dict[str, object] = {"sessions": sessions, "total_mb": round(total_mb, 1), "cores": cores}
    for jobs in (1, cores, 1, cores):  # twice each, interleaved; the better of two
        t = time.perf_counter()
        cpu = os.times()
        results = analyze_many(paths, jobs=jobs)
        spent = time.perf_counter() - t
        after = os.times()
        assert len(results) == sessions and not any("error" in r for r in results)
        key = f"jobs_{jobs}_s"
        out[key] = round(min(spent, out.get(key, spent)), 2)  # type: ignore[call-overload]
        children_cpu = (after.children_user + after.children_system) - (
            cpu.children_user + cpu.children_system
        )
        own_cpu = (after.user + after.system) - (cpu.user + cpu.system)
        out[f"jobs_{jobs}_cpu_s"] = round(children_cpu + own_cpu, 2)
    out["speedup"] = round(out["jobs_1_s"] / out[f"jobs_{cores}_s"], 2)  # type: ignore[operator]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1000, help="size of the large session (default 1000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=1000, help="small sessions for analyze-dir (0: skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    result: dict[str, object] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory(prefix="bench-analyze-") as tmp:
        result["analyze"] = bench_large(Path(tmp), args.size_mb, args.rounds, rng)
        if args.sessions:
            result["analyze_dir"] = bench_dir(Path(tmp), args.sessions, rng)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    a: dict[str, Any] = result["analyze"]  # type: ignore[assignment]
    print(
        f"Python {result['python']} on {result['machine']}, {result['cores']} cores, "
        f"load {result['load_average']}"
    )
    print(f"session: {a['file_mb']} MB, {a['entries']} entries ({args.rounds} rounds, interleaved)")
    print(f"  parse only (orjson per line): {a['parse_mb_s']} MB/s, peak RSS {a['parse_peak_rss_mb']} MB")
    print(f"  read (iter_entries):          {a['read_mb_s']} MB/s")
    print(f"  analyze:                      {a['analyze_mb_s']} MB/s, peak RSS {a['analyze_peak_rss_mb']} MB")
    print(
        f"  read / parse speed (paired median):    {a['read_vs_parse']} (CPU time: {a['read_vs_parse_cpu']})"
    )
    print(
        f"  analyze / parse speed (paired median): {a['analyze_vs_parse']} "
        f"(CPU time: {a['analyze_vs_parse_cpu']})"
    )
    print(
        f"  view --html: {a['html_s']} s, a {a['html_page_mb']} MB page, peak RSS {a['html_peak_rss_mb']} MB"
    )
    if "analyze_dir" in result:
        d: dict[str, Any] = result["analyze_dir"]  # type: ignore[assignment]
        many = d[f"jobs_{d['cores']}_s"]
        print(f"analyze-dir: {d['sessions']} sessions, {d['total_mb']} MB")
        print(f"  1 process: {d['jobs_1_s']} s; {d['cores']} processes: {many} s; speedup {d['speedup']}x")


if __name__ == "__main__":
    main()
