"""Cost per span of the session processor against the bare OpenTelemetry SDK, side by side.

Each configuration has its own TracerProvider; rounds are interleaved (the order rotates each
round) so that machine noise hits all of them alike, and the result is the median over rounds
of each configuration's cost and of its paired ratio to the bare SDK in the same round.

    python benchmarks/bench_span_cost.py                 # default: 21 rounds of 3000 spans
    python benchmarks/bench_span_cost.py --rounds 41 --spans 5000 --json

A span here is ``start_as_current_span`` with 4 attributes, ended (what an instrumented call costs).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import orjson
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from otel_agent_trace._internal import sink
from otel_agent_trace.recording import SessionRecorder, SessionSpanProcessor
from otel_agent_trace.settings import Settings

ATTRIBUTES = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "read_file",
    "gen_ai.tool.call.id": "call_0001",
    "file.path": "/tmp/example.txt",
}


class DroppingExporter(SpanExporter):
    """Accepts every batch and throws it away (the cost of batching, not of a network)."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class FloorProcessor(SpanProcessor):
    """The lower bound of a crash-safe file: the line(s) a span needs (orjson + ``os.write`` on an
    ``O_APPEND`` descriptor) and nothing else — no ids, tree, tiers or redaction. With
    ``lines=1`` one complete line when the span ends (what a short span costs the session
    processor); with ``lines=2`` also a line when it starts, written at once."""

    def __init__(self, path: Path, lines: int):
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._seq = 0
        self._lines = lines

    def _line(self, entry: dict) -> None:
        self._seq += 1
        os.write(self._fd, orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))

    def on_start(self, span, parent_context=None) -> None:  # type: ignore[no-untyped-def]
        if self._lines == 1:
            return
        ctx = span.context
        attrs = dict(span._attributes._dict)  # the same fast copy the recorder uses
        self._line(
            {
                "id": f"floor000-{self._seq:04d}",
                "parent_id": "floor000-0000",
                "type": "span.start",
                "layer": "tool",
                "ts": span.start_time,
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": f"{ctx.trace_id:032x}",
                "span_id": f"{ctx.span_id:016x}",
                "parent_span_id": None,
                "attributes": attrs,
            }
        )

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        self._line(
            {
                "id": f"floor000-{self._seq:04d}",
                "parent_id": "floor000-0001",
                "type": "span.end",
                "layer": "tool",
                "ts": span.end_time,
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": f"{ctx.trace_id:032x}",
                "span_id": f"{ctx.span_id:016x}",
                "parent_span_id": None,
                "duration_ns": span.end_time - span.start_time,
                "status": {"code": span.status.status_code.name},
                "attributes": dict(span._attributes._dict),
            }
        )

    def shutdown(self) -> None:
        os.close(self._fd)


class InlineProcessor(SpanProcessor):
    """A reference, not a product: what the session processor does for a short span (queue the
    start, one ``span.end`` entry with ids, parent link, layer, redacted name and attributes,
    ``session.id`` on the span) written as one function for one file, without the guards, tiers,
    fork handling and flusher of the real one. The lower bound of that feature set in Python."""

    def __init__(self, path: Path):
        from otel_agent_trace.recording import layer_of
        from otel_agent_trace.redaction import get_redactor

        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._pending: list = []
        self._seq = 1
        self._lock = threading.RLock()
        self._entries: dict[int, str] = {}
        self._show = get_redactor().redact_span
        self._layer_of = layer_of

    def on_start(self, span, parent_context=None) -> None:  # type: ignore[no-untyped-def]
        span._attributes._dict["session.id"] = "session-20261129-000000-0123abcd"
        self._pending.append(span)

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        sid = ctx.span_id
        pending = self._pending
        if not pending or pending[-1].context is not ctx:
            return  # (not in this benchmark: every span is short)
        attrs = dict(span._attributes._dict)
        parent = span.parent
        parent_sid = parent.span_id if parent is not None else None
        end = span.end_time
        with self._lock:
            del pending[: len(pending)]
            name, shown = self._show(span.name, attrs)
            seq = self._seq
            self._seq = seq + 1
            eid = f"0123abcd-{seq:04d}"
            entry = {
                "id": eid,
                "parent_id": self._entries.get(parent_sid, "0123abcd-0000"),
                "type": "span.end",
                "layer": self._layer_of(attrs),
                "ts": end,
                "name": name,
                "kind": span.kind._name_,
                "trace_id": f"{ctx.trace_id:032x}",
                "span_id": f"{sid:016x}",
                "parent_span_id": f"{parent_sid:016x}" if parent_sid is not None else None,
                "duration_ns": end - span.start_time,
                "status": {"code": span.status.status_code._name_},
                "attributes": shown,
            }
            os.write(self._fd, orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
            self._entries[sid] = eid
            if len(self._entries) > 8192:
                self._entries.clear()

    def shutdown(self) -> None:
        os.close(self._fd)


class Config:
    def __init__(
        self, key: str, label: str, provider: TracerProvider, recorder: SessionRecorder | None = None
    ):
        self.key = key
        self.label = label
        self.provider = provider
        self.tracer = provider.get_tracer("bench")
        self.recorder = recorder
        self.costs: list[float] = []  # µs per span, one per round


def _session_config(key: str, label: str, tiers: tuple[str, ...], directory: Path, **settings) -> Config:
    settings = Settings(
        directory=directory / key, tiers=tiers, write_zip=False, auto_session=False, **settings
    )
    recorder = SessionRecorder(settings, name=f"bench-{key}").start()
    provider = TracerProvider()
    provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
    return Config(key, label, provider, recorder)


def build_configs(directory: Path) -> list[Config]:
    bare = TracerProvider()
    batched = TracerProvider()
    batched.add_span_processor(BatchSpanProcessor(DroppingExporter()))
    floor1 = TracerProvider()
    floor1.add_span_processor(FloorProcessor(directory / "floor1.jsonl", lines=1))
    floor2 = TracerProvider()
    floor2.add_span_processor(FloorProcessor(directory / "floor2.jsonl", lines=2))
    inline = TracerProvider()
    inline.add_span_processor(InlineProcessor(directory / "inline.jsonl"))
    return [
        Config("sdk", "bare SDK (no processor)", bare),
        Config("batch", "SDK + BatchSpanProcessor (dropping exporter)", batched),
        Config("floor", "SDK + floor: one line per finished span, nothing else", floor1),
        Config("floor2", "SDK + floor: a line at start and at end, nothing else", floor2),
        Config("inline", "SDK + reference: a short span's entry, inline, one file (not the product)", inline),
        _session_config("trace", "SDK + session processor, trace tier (default)", ("trace",), directory),
        _session_config(
            "strict",
            "SDK + session processor, trace tier, every start at once (FLUSH_MS=0)",
            ("trace",),
            directory,
            flush_ms=0,
        ),
        _session_config("checkpoint", "SDK + session processor, checkpoint tier", ("checkpoint",), directory),
        _session_config("both", "SDK + session processor, both tiers", ("trace", "checkpoint"), directory),
    ]


def run_round(config: Config, spans: int) -> float:
    """µs per span over ``spans`` spans."""
    if config.recorder is not None:
        sink.set_active(config.recorder)  # the processor writes to the active recorder
    else:
        sink.set_active(None)
    tracer = config.tracer
    attrs = ATTRIBUTES
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(spans):
        with tracer.start_as_current_span("execute_tool read_file", attributes=attrs):
            pass
    return (time.perf_counter_ns() - start) / spans / 1000


def measure(rounds: int, spans: int, warmup: int, directory: Path) -> list[Config]:
    configs = build_configs(directory)
    for config in configs:
        run_round(config, warmup)
    for r in range(rounds):
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        for config in order:
            config.costs.append(run_round(config, spans))
    for config in configs:
        if config.recorder is not None:
            sink.set_active(config.recorder)
            config.recorder.stop()
        config.provider.shutdown()
    sink.set_active(None)
    return configs


def summarise(configs: list[Config]) -> list[dict[str, float | str]]:
    base = configs[0].costs
    rows = []
    for config in configs:
        ratios = [c / b for c, b in zip(config.costs, base, strict=True)]
        rows.append(
            {
                "key": config.key,
                "label": config.label,
                "median_us": statistics.median(config.costs),
                "min_us": min(config.costs),
                "ratio_vs_sdk": statistics.median(ratios),
                "added_vs_sdk": statistics.median(ratios) - 1.0,
            }
        )
    return rows


def render(rows: list[dict[str, float | str]], rounds: int, spans: int) -> str:
    out = [
        f"{rounds} interleaved rounds × {spans} spans; "
        f"Python {platform.python_version()} on {platform.machine()}",
        "",
        "| configuration | median µs/span | min µs/span | × bare SDK (paired median) | added vs bare SDK |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        out.append(
            f"| {row['label']} | {row['median_us']:.1f} | {row['min_us']:.1f} | "
            f"{row['ratio_vs_sdk']:.2f} | {row['added_vs_sdk']:+.2f}× |"
        )
    trace = next(r for r in rows if r["key"] == "trace")
    verdict = "meets" if float(trace["added_vs_sdk"]) <= 0.5 else "MISSES"
    added = float(trace["added_vs_sdk"])
    floor = float(next(r for r in rows if r["key"] == "floor")["added_vs_sdk"])
    out += [
        "",
        f"Trace tier adds {added:.2f}× a bare SDK span: {verdict} the ≤ 0.5× target.",
        f"The floor (one crash-safe line per finished span, nothing else) adds {floor:.2f}×: the trace "
        f"tier costs {added / floor if floor > 0 else float('nan'):.2f}× the floor's addition.",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--spans", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-span-cost-") as tmp:
        configs = measure(args.rounds, args.spans, args.warmup, Path(tmp))
    rows = summarise(configs)
    print(render(rows, args.rounds, args.spans))
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
