"""Redaction cost per span: the trace tier (redacted, reduced) against the checkpoint tier (complete,
unredacted) writing the same realistic spans, and the OTLP stream with and without redaction.

Each round builds fresh spans (new ids, new tool output, a conversation that grows), so the
redactor's memo of repeated strings helps only where a real run would repeat itself (model names,
tool names, earlier messages). Rounds alternate which tier goes first; the result is the median
over rounds of each tier's cost per span and of the paired ratio trace / checkpoint.

    python benchmarks/bench_redaction.py                  # 15 rounds of 400 spans
    python benchmarks/bench_redaction.py --rounds 31 --spans 1000 --json

Spans (a quarter each): a chat call (GenAI attributes, 2-12 messages of 200-1500 characters), a
tool call (arguments, 2-20 KB of output), an HTTP request (URL with a query, headers), a
subprocess (command line, paths under $HOME). A few carry a secret, as real runs do.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind

from otel_agent_trace._internal import sink
from otel_agent_trace.recording import SessionRecorder, redact_span
from otel_agent_trace.redaction import get_redactor, reset_redactor
from otel_agent_trace.settings import Settings

HOME = os.path.expanduser("~")
WORDS = tuple(
    [
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
        "the",
        "test",
        "suite",
        "passes",
        "after",
        "the",
        "change",
        "to",
        "retry",
        "logic",
        "with",
        "exponential",
        "backoff",
        "so",
        "we",
        "read",
        "the",
        "config",
        "and",
        "update",
        "the",
        "handler",
    ]
)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _line(rng: random.Random) -> str:
    """One line of tool output: code, JSON, a log line or prose (with the words secrets hide behind)."""
    w = [rng.choice(WORDS) for _ in range(4)]
    n = rng.randint(0, 999)
    return rng.choice(
        (
            f"    {w[0]}_{w[1]} = {w[2]}({w[3]}, retries={n % 7})",
            f'{{"id": {n}, "name": "{w[0]}", "status": "ok", "path": "{HOME}/project/{w[1]}.py"}}',
            f"2024-05-01 12:{n % 60:02d}:07 INFO {w[0]} {w[1]} {w[2]} in {n} ms",
            f"def {w[0]}_{w[1]}(self, key: str, timeout: int = 30) -> bool:",
            f"    max_tokens = {n}  # {w[2]} {w[3]} token budget",
            _words(rng, 12),
        )
    )


def _id(rng: random.Random, n: int = 24) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


class Workload:
    """Fresh realistic spans and their full-fidelity content, for one round."""

    def __init__(self, seed: int, n: int):
        rng = random.Random(seed)
        provider = TracerProvider(resource=Resource({"service.name": "agent"}))
        tracer = provider.get_tracer("bench")
        self.items: list[tuple[ReadableSpan, dict[str, Any] | None]] = []
        conversation: list[dict[str, Any]] = [{"role": "system", "content": _words(rng, 60)}]
        with tracer.start_as_current_span("invoke_agent bench") as root:
            self.root = root
            for i in range(n):
                kind = i % 4
                secret = rng.random() < 0.05
                content: dict[str, Any] | None = None
                if kind == 0:
                    conversation.append({"role": "user", "content": _words(rng, rng.randint(40, 250))})
                    if len(conversation) > 12:
                        conversation = conversation[:1] + conversation[-10:]
                    answer = {"role": "assistant", "content": _words(rng, rng.randint(40, 250))}
                    attrs = {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.provider.name": "openai",
                        "gen_ai.request.model": "gpt-4o-mini",
                        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                        "gen_ai.response.id": "chatcmpl-" + _id(rng),
                        "gen_ai.response.finish_reasons": ["stop"],
                        "gen_ai.usage.input_tokens": rng.randint(100, 4000),
                        "gen_ai.usage.output_tokens": rng.randint(10, 800),
                        "server.address": "api.openai.com",
                    }
                    content = {"input_messages": list(conversation), "output_messages": [answer]}
                    conversation.append(answer)
                    name, span_kind = "chat gpt-4o-mini", SpanKind.CLIENT
                elif kind == 1:
                    path = f"{HOME}/project/src/module_{rng.randint(0, 50)}.py"
                    output = "\n".join(_line(rng) for _ in range(rng.randint(20, 200)))
                    if secret:
                        output += "\nOPENAI_API_KEY=sk-proj-" + _id(rng, 40)
                    attrs = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "read_file",
                        "gen_ai.tool.call.id": "call_" + _id(rng),
                        "gen_ai.tool.type": "function",
                    }
                    content = {"tool_arguments": {"path": path, "max_lines": 200}, "tool_result": output}
                    name, span_kind = "execute_tool read_file", SpanKind.INTERNAL
                elif kind == 2:
                    query = f"q={_id(rng, 8)}&page={rng.randint(1, 9)}"
                    if secret:
                        query += "&api_key=" + _id(rng, 32)
                    attrs = {
                        "http.request.method": "GET",
                        "url.full": f"https://api.github.com/repos/org/repo/issues?{query}",
                        "server.address": "api.github.com",
                        "server.port": 443,
                        "http.response.status_code": 200,
                        "http.request.header.user-agent": ["python-httpx/0.27"],
                        "http.request.header.authorization": ["Bearer " + _id(rng, 40)],
                    }
                    name, span_kind = "GET", SpanKind.CLIENT
                else:
                    attrs = {
                        "process.command_args": ["git", "diff", "--stat", f"{HOME}/project/src"],
                        "process.executable.path": "/usr/bin/git",
                        "process.pid": rng.randint(1000, 60000),
                        "process.exit.code": 0,
                        "process.working_directory": f"{HOME}/project",
                    }
                    name, span_kind = "git", SpanKind.INTERNAL
                with tracer.start_as_current_span(name, kind=span_kind, attributes=attrs) as span:
                    pass
                self.items.append((span, content))  # type: ignore[arg-type]


KINDS = ("chat", "tool", "http", "process")


def write_tier(workload: Workload, tier: str, directory: Path, kind: int | None = None) -> float:
    """Seconds to record the spans of ``workload`` (of one kind, or all) in one tier."""
    items = workload.items if kind is None else workload.items[kind :: len(KINDS)]
    recorder = SessionRecorder(Settings(directory=directory, tiers=(tier,), write_zip=False)).start()
    try:
        gc.disable()
        t0 = time.perf_counter()
        for span, content in items:
            recorder.on_span_start(span)
            if content is not None:
                recorder.attach_content(span, content)
            recorder.on_span_end(span)
        elapsed = time.perf_counter() - t0
    finally:
        gc.enable()
        recorder.stop()
        sink.set_active(None)
    return elapsed


def otlp_encode(workload: Workload, redact: bool) -> float:
    """Seconds to encode the spans as OTLP protobuf (what an OTLP exporter does), redacted or not."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = [s for s, _ in workload.items]
    redactor = get_redactor()
    gc.disable()
    try:
        t0 = time.perf_counter()
        if redact:
            resources: dict[int, Any] = {}
            spans = [redact_span(s, redactor, resources) for s in spans]
        encode_spans(spans).SerializeToString()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--spans", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reset_redactor()
    costs: dict[str, list[float]] = {"trace": [], "checkpoint": [], "otlp": [], "otlp_redacted": []}
    ratios: dict[str, list[float]] = {"tier": [], "otlp": [], **{k: [] for k in KINDS}}
    bytes_written: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-redaction-") as tmp:
        for r in range(args.rounds + 1):  # round 0 warms up
            workload = Workload(seed=r, n=args.spans)
            order = ("trace", "checkpoint") if r % 2 else ("checkpoint", "trace")
            got: dict[str, float] = {}
            for tier in order:
                directory = Path(tmp) / f"r{r}-{tier}"
                got[tier] = write_tier(workload, tier, directory) / args.spans * 1e6
                bytes_written[tier] = sum(p.stat().st_size for p in directory.iterdir())
            for k, name in enumerate(KINDS):  # each kind alone, on fresh spans (no warm memo)
                alone = Workload(seed=10_000 + 10 * r + k, n=args.spans * len(KINDS))
                per = {t: write_tier(alone, t, Path(tmp) / f"r{r}-{t}-{name}", kind=k) for t in order}
                ratios[name].append(per["trace"] / per["checkpoint"])
            # The OTLP stream redacts the spans the trace tier has just written: the memo of
            # repeated strings is warm, as in a real run with both.
            plain = otlp_encode(workload, redact=False) / args.spans * 1e6
            redacted = otlp_encode(workload, redact=True) / args.spans * 1e6
            if r == 0:
                for name in KINDS:
                    ratios[name].clear()
                continue
            for tier in order:
                costs[tier].append(got[tier])
            costs["otlp"].append(plain)
            costs["otlp_redacted"].append(redacted)
            ratios["tier"].append(got["trace"] / got["checkpoint"])
            ratios["otlp"].append(redacted / plain)
    result = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rounds": args.rounds,
        "spans_per_round": args.spans,
        "us_per_span": {k: round(statistics.median(v), 1) for k, v in costs.items()},
        "ratio_trace_over_checkpoint": round(statistics.median(ratios["tier"]), 3),
        "ratio_otlp_redacted_over_plain": round(statistics.median(ratios["otlp"]), 3),
        "ratio_trace_over_checkpoint_by_kind": {k: round(statistics.median(ratios[k]), 3) for k in KINDS},
        "bytes_last_round": bytes_written,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    us = result["us_per_span"]
    print(f"{args.rounds} rounds x {args.spans} spans, Python {result['python']}")
    print(f"  checkpoint tier write   {us['checkpoint']:8.1f} µs/span  ({bytes_written['checkpoint']} bytes)")
    print(f"  trace tier write        {us['trace']:8.1f} µs/span  ({bytes_written['trace']} bytes)")
    print(f"  ratio trace/checkpoint  {result['ratio_trace_over_checkpoint']:8.3f}  (goal <= 1.3)")
    by_kind = result["ratio_trace_over_checkpoint_by_kind"]
    print("  by kind (trace/checkpoint): " + ", ".join(f"{k} {v:.2f}" for k, v in by_kind.items()))
    print(f"  OTLP encode             {us['otlp']:8.1f} µs/span")
    print(f"  OTLP redact + encode    {us['otlp_redacted']:8.1f} µs/span")
    print(f"  ratio redacted/plain    {result['ratio_otlp_redacted_over_plain']:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
