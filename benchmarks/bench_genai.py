"""Overhead per model call of our OpenAI instrumentation, side by side with the peers.

Every configuration runs in its own subprocess of a separate virtualenv (peers register the same
``openai`` entry point and patch the same methods, so they must not share a process), against
the local replay server (tests/fakes/llm_server.py) with the real ``openai`` client. Rounds are
interleaved (the order rotates each round) so machine noise hits all configurations alike; each
child reports the median time of its calls, and the result is, per configuration, the median
over rounds of that median and of its paired difference to "none" in the same round.

Set up the bench virtualenv once (peers need their own OpenTelemetry versions)::

    python -m venv /root/.cache/oat/bench-venv
    /root/.cache/oat/bench-venv/bin/pip install -e . openai httpx \\
        opentelemetry-instrumentation-openai-v2 opentelemetry-instrumentation-openai \\
        openinference-instrumentation-openai 'opentelemetry-util-genai==1.1b0'

then::

    python benchmarks/bench_genai.py --python /root/.cache/oat/bench-venv/bin/python
    python benchmarks/bench_genai.py --rounds 9 --calls 400 --json

Each child uses the same pipeline: an SDK TracerProvider with a SimpleSpanProcessor and an
exporter that only counts spans (so "spans/call" shows what each instrumentation records).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PYTHON = "/root/.cache/oat/bench-venv/bin/python"

CONFIGS = {
    "none": "no instrumentation",
    "ours": "otel-agent-trace (spans only)",
    "ours+session": "otel-agent-trace + session file (trace tier)",
    "openai-v2": "opentelemetry-instrumentation-openai-v2",
    "openllmetry": "opentelemetry-instrumentation-openai (OpenLLMetry)",
    "openinference": "openinference-instrumentation-openai",
    "ours+openai-v2": "both: openai-v2 first, then ours (duplicate check)",
    "openai-v2+ours": "both: ours first, then openai-v2 (duplicate check)",
}


# --- child ---------------------------------------------------------------------------------------


def _instrumentors(config: str, provider, tmp: str) -> list:
    """The instrumentors of a configuration, in the order they are switched on."""

    def ours():
        from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor()

    def v2():
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        return OpenAIInstrumentor()

    if config == "ours+session":
        from otel_agent_trace.recording import SessionSpanProcessor, start_session
        from otel_agent_trace.settings import Settings

        settings = Settings(directory=Path(tmp), write_zip=False)
        provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
        start_session(settings)
    if config in ("ours", "ours+session"):
        return [ours()]
    if config == "openai-v2":
        return [v2()]
    if config == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        return [OpenAIInstrumentor()]
    if config == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        return [OpenAIInstrumentor()]
    if config == "ours+openai-v2":
        return [v2(), ours()]
    if config == "openai-v2+ours":
        return [ours(), v2()]
    return []


def child(config: str, url: str, calls: int, warmup: int, stream: bool, block: int) -> dict:
    """Blocks of calls with the configuration off, then on, alternately, in one process: the
    overhead is the median over block pairs of (median on − median off), so noise that lasts
    longer than a block cancels out."""
    import tempfile

    import openai
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def __init__(self) -> None:
            self.spans = 0

        def export(self, spans):
            self.spans += len(spans)
            return SpanExportResult.SUCCESS

    exporter = Counting()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    instrumentors = _instrumentors(config, provider, tempfile.mkdtemp(prefix="bench-genai-"))

    def switch(on: bool) -> None:
        for inst in instrumentors if on else reversed(instrumentors):
            if on:
                inst.instrument(tracer_provider=provider)
            else:
                inst.uninstrument()

    client = openai.OpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi there"}]

    def one() -> int:
        t0 = time.perf_counter_ns()
        if stream:
            for _ in client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True):
                pass
        else:
            client.chat.completions.create(model="gpt-4o-mini", messages=messages, temperature=0.2)
        return time.perf_counter_ns() - t0

    switch(True)
    for _ in range(warmup):
        one()
    before = exporter.spans
    first_on = [one() for _ in range(block)]  # before any uninstrument: the process-level figure
    first_spans = (exporter.spans - before) / block
    switch(False)
    for _ in range(warmup):
        one()
    on_times: list[int] = []
    off_times: list[int] = []
    diffs: list[float] = []
    spans = 0
    for _ in range(max(1, calls // block)):
        off = [one() for _ in range(block)]
        switch(True)
        before = exporter.spans
        on = [one() for _ in range(block)]
        spans += exporter.spans - before
        switch(False)
        diffs.append((statistics.median(on) - statistics.median(off)) / 1000)
        on_times += on
        off_times += off
    return {
        "first_on_us": statistics.median(first_on) / 1000,
        "first_spans_per_call": first_spans,
        "median_us": statistics.median(on_times) / 1000,
        "base_us": statistics.median(off_times) / 1000,
        "overhead_us": statistics.median(diffs),
        "spans_per_call": spans / len(on_times),
    }


def micro(calls: int = 3000) -> dict:
    """Our wrapper alone: around a function returning a parsed ``ChatCompletion`` (no HTTP),
    against a bare SDK span with 4 attributes, same pipeline. Runs in the current interpreter."""
    sys.path.insert(0, str(ROOT))
    import openai
    from openai.types.chat import ChatCompletion
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.trace import SpanKind

    from otel_agent_trace.instrumentation._genai import model_call
    from otel_agent_trace.instrumentation._genai.calls import sync_wrapper
    from otel_agent_trace.instrumentation.openai.chat import ChatSpec

    class Dropping(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Dropping()))
    model_call.use_tracer_provider(provider)
    body = json.loads((ROOT / "tests/fakes/recordings/openai_chat_text.json").read_text())["json"]
    response = ChatCompletion.model_validate(body)
    wrapper = sync_wrapper(ChatSpec((openai.Stream,)))
    kwargs = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.2}
    tracer = provider.get_tracer("bench")
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "a": 0.2, "b": 1}

    def bare() -> None:
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=attrs):
            pass

    def ours() -> None:
        wrapper(lambda **kw: response, None, (), kwargs)

    out: dict[str, list[float]] = {"bare_span_us": [], "ours_us": []}
    for _ in range(5):
        for name, fn in (("bare_span_us", bare), ("ours_us", ours)):
            times = []
            for _ in range(calls):
                t0 = time.perf_counter_ns()
                fn()
                times.append(time.perf_counter_ns() - t0)
            out[name].append(statistics.median(times) / 1000)
    return {k: statistics.median(v) for k, v in out.items()}


# --- parent --------------------------------------------------------------------------------------


def run_child(python: str, config: str, url: str, args: argparse.Namespace, stream: bool) -> dict:
    cmd = [
        python,
        __file__,
        "--child",
        config,
        "--url",
        url,
        "--calls",
        str(args.calls),
        "--warmup",
        str(args.warmup),
    ]
    if stream:
        cmd.append("--stream")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_", "AGENT_TRACE_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        return {
            "error": done.stderr.strip().splitlines()[-1]
            if done.stderr.strip()
            else f"exit {done.returncode}"
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", default=DEFAULT_PYTHON, help="interpreter of the bench virtualenv")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--block", type=int, default=20, help="calls per on/off block")
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--json", action="store_true")
    p.add_argument("--micro", action="store_true", help="our wrapper alone, no HTTP (this interpreter)")
    p.add_argument("--child")
    p.add_argument("--url")
    p.add_argument("--stream", action="store_true")
    args = p.parse_args(argv)

    if args.micro:
        print(json.dumps(micro()))
        return 0
    if args.child:
        print(json.dumps(child(args.child, args.url, args.calls, args.warmup, args.stream, args.block)))
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.fakes.llm_server import FakeLLMServer

    configs = [c for c in args.configs.split(",") if c]
    results: dict[str, dict[str, dict]] = {}
    with FakeLLMServer(keep_alive_streams=True) as server:
        for mode in ("chat", "stream"):
            per: dict[str, list[dict]] = {c: [] for c in configs}
            for r in range(args.rounds):
                order = configs[r % len(configs) :] + configs[: r % len(configs)]
                for config in order:
                    per[config].append(
                        run_child(args.python, config, server.openai_url, args, mode == "stream")
                    )
            results[mode] = summarise(per)
    report = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "rounds": args.rounds,
        "calls_per_round": args.calls,
        "results": results,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render(report))
    return 0


def summarise(per: dict[str, list[dict]]) -> dict[str, dict]:
    """Per configuration: the in-process paired overhead (on/off blocks), and the process-level
    one (its first block, before any uninstrument, against "none" of the same round). A
    configuration whose spans per call change after uninstrument + instrument again does not
    undo its patches cleanly: only its process-level figure holds."""
    out: dict[str, dict] = {}
    base = per.get("none") or []
    for config, runs in per.items():
        errors = [r["error"] for r in runs if "error" in r]
        if errors:
            out[config] = {"error": errors[0]}
            continue
        row: dict = {}
        if base and all("error" not in b for b in base):
            row["process_overhead_us"] = statistics.median(
                r["first_on_us"] - b["first_on_us"] for r, b in zip(runs, base, strict=True)
            )
        row["first_spans_per_call"] = statistics.median(r["first_spans_per_call"] for r in runs)
        row["clean_uninstrument"] = all(r["spans_per_call"] == r["first_spans_per_call"] for r in runs)
        out[config] = row | {
            "median_us": statistics.median(r["median_us"] for r in runs),
            "base_us": statistics.median(r["base_us"] for r in runs),
            "overhead_us": statistics.median(r["overhead_us"] for r in runs),
            "ratio": statistics.median(r["median_us"] / r["base_us"] for r in runs),
            "spans_per_call": statistics.median(r["spans_per_call"] for r in runs),
        }
    return out


def render(report: dict) -> str:
    lines = [f"rounds={report['rounds']} calls/round={report['calls_per_round']} {report['machine']}"]
    for mode, rows in report["results"].items():
        lines.append("")
        lines.append(
            f"{mode}: {'configuration':<56} {'on µs':>9} {'off µs':>9} {'paired µs':>10} "
            f"{'ratio':>7} {'process µs':>10} {'spans/call':>10}"
        )
        for config, row in rows.items():
            label = f"{config} ({CONFIGS.get(config, '')})"
            if "error" in row:
                lines.append(f"      {label:<56} error: {row['error']}")
                continue
            paired = f"{row['overhead_us']:.1f}" if row["clean_uninstrument"] else "n/a*"
            lines.append(
                f"      {label:<56} {row['median_us']:>9.1f} {row['base_us']:>9.1f} {paired:>10} "
                f"{row['ratio']:>7.3f} {row.get('process_overhead_us', 0):>10.1f} "
                f"{row['first_spans_per_call']:>10.2f}"
            )
    lines.append("")
    lines.append("* uninstrument() did not undo its patches (more spans per call after re-instrumenting)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
