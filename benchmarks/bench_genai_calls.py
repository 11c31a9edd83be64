"""What one model call costs with each GenAI instrumentation on, as users run it.

The real ``openai`` client (the version in tests/constraints.txt) against a local stub server
(``benchmarks/genai_calls/stub_server.py``, a tool-call response, plain and streamed). Every
configuration exports every span through the OTLP protobuf encoder into a local file, flushed
inside the timed call; ours is set up by ``opentelemetry-instrument``'s own ``initialize()`` with
no backend, so the session file is written. Each configuration runs in its own process (peers in
their own virtualenvs), rounds interleaved with the order rotating; inside a process, blocks of
calls alternate with the patches switched off and on, and the added cost is the median over
block pairs of (median on − median off), then the median over rounds.

Set up the peers' virtualenvs once (outside the repository)::

    python benchmarks/bench_genai_calls.py --setup

then::

    python benchmarks/bench_genai_calls.py --rounds 15 --json docs/benchmarks/genai_calls.json
    python benchmarks/bench_genai_calls.py --history --rounds 9     # 400 vs 10 messages of 1 KB
    python benchmarks/bench_genai_calls.py --client bedrock --rounds 9   # boto3's converse instead

With ``--client bedrock`` the calls are a boto3 ``bedrock-runtime`` client's ``converse`` /
``converse_stream`` (the same tool-call answer, as Bedrock sends it) and the configurations are
ours, the bare span and the noise check (the peers here instrument ``openai`` only). The same
with ``--client ollama`` (``ollama``'s ``chat``, the answer as Ollama's JSON / NDJSON),
``--client mistral`` (``mistralai``'s ``chat.complete`` / ``chat.stream``), ``--client
litellm`` (``litellm.completion`` calling the OpenAI API through the openai client; the openai
peers run too, though LiteLLM 1.110 posts to ``/chat/completions`` itself, so that contrib's and
OpenLLMetry's wrappers of ``Completions.create`` make no span: only OpenInference's, which wraps
the client's ``request``, does; OpenInference's LiteLLM instrumentor is one more peer,
``openinference-litellm``), ``--client
ollama-generate`` / ``ollama-embed`` (``ollama``'s ``generate``, plain and streamed, and
``embed``, never streamed: its "chat" column) and ``--client gemini-afc`` (google-genai's
``generate_content`` / ``generate_content_stream`` with a Python function as the tool: the SDK
calls it and asks again, two requests in one call). google-genai cannot share the main
environment (it pins ``tenacity < 9.2``): its calls run in the virtualenv of its tests
(``python -m tests.services.genai install``, ``$AGENT_TRACE_GENAI_VENV``), which holds this
checkout, editable, and the OTLP encoder.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from genai_calls.stub_server import StubServer  # noqa: E402

VENVS = Path.home() / ".cache" / "otel-agent-trace" / "bench-venvs"
COMMON = [
    "openai==3.57.0",
    "httpx2==2.16.2",
    "httpx==0.28.1",
    "opentelemetry-sdk==1.45.1",
    "opentelemetry-exporter-otlp-proto-common==1.45.1",
    "opentelemetry-proto==1.45.1",
]
PEERS = {
    # venv name: packages (contrib's openai-v2 2.4b0 needs httpx and util-genai 1.1b0 beside openai 3.x)
    "contrib": [
        "opentelemetry-instrumentation-openai-v2==2.4b0",
        "opentelemetry-util-genai==1.1b0",
        "opentelemetry-instrumentation==0.66b1",
    ],
    "openinference": ["openinference-instrumentation-openai==0.1.66"],
    "openllmetry": ["opentelemetry-instrumentation-openai==0.62.4"],
    # OpenInference's LiteLLM instrumentor (``--client litellm`` only: it wraps ``litellm.completion``)
    "openinference-litellm": ["openinference-instrumentation-litellm==0.1.51"],
}
# Every peer's virtualenv also holds LiteLLM (``--client litellm``: the openai peers are counted on
# the openai client's work under it), its dependencies at the main environment's versions
# (tests/constraints.txt without the OpenTelemetry and OpenInference lines) so the call is the same.
LITELLM = "litellm==1.110.2"
CONTENT_ON = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
# config: (label, venv or None for this interpreter, environment)
CONFIGS: dict[str, tuple[str, str | None, dict[str, str]]] = {
    "none": ("no instrumentation (noise check)", None, {}),
    "bare": ("one bare SDK span", None, {}),
    "contrib": ("contrib openai-v2", "contrib", {}),
    "contrib-content": (
        "contrib openai-v2, content on",
        "contrib",
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        },
    ),
    "openinference": ("OpenInference", "openinference", {}),
    "openllmetry": ("OpenLLMetry", "openllmetry", {}),
    "openinference-litellm": ("OpenInference litellm", "openinference-litellm", {}),
    "ours": ("ours, default (trace tier)", None, {}),
    "ours-both": ("ours, AGENT_TRACE_TIER=both + content", None, {"AGENT_TRACE_TIER": "both", **CONTENT_ON}),
    # not in the default list: the session file off, to tell the spans' cost from the recorder's
    "ours-spans": (
        "ours, spans only (AGENT_TRACE_RECORD=0: no session file)",
        None,
        {"AGENT_TRACE_RECORD": "0"},
    ),
    # not in the default list either, chat only: a reference, not a product (genai_calls/floor.py)
    "floor-spans": ("reference: a minimal wrapper, contrib's attributes, no file", None, {}),
    "floor": ("reference: the same and one crash-safe line per call", None, {}),
}
HISTORY_CONFIGS = ("ours", "ours-both", "contrib", "ours-base")
CLIENTS = (
    "openai",
    "bedrock",
    "ollama",
    "ollama-generate",
    "ollama-embed",
    "mistral",
    "litellm",
    "gemini-afc",
)
ONE_MODE = {"ollama-embed": "chat"}  # clients with no stream: their one mode
BASE_TREE: list[str] = []  # --base-tree: a checkout whose otel_agent_trace "ours-base" runs


def _add_base(tree: str) -> None:
    BASE_TREE[:] = [tree]
    CONFIGS["ours-base"] = (f"ours at {Path(tree).name}, default (trace tier)", None, {})


def peers_of(client: str) -> list[str]:
    """The configurations that run with ``client``: ours, the bare span and the noise check with
    every client; the openai peers with ``openai`` and ``litellm`` (which calls the openai client),
    OpenInference's LiteLLM instrumentor with ``litellm`` only."""
    if client == "openai":
        return [c for c in CONFIGS if c != "openinference-litellm"]
    if client == "litellm":
        return [c for c in CONFIGS if not c.startswith("floor")]
    return [c for c, (_label, venv, _env) in CONFIGS.items() if venv is None]


def setup_venvs() -> None:
    pins = [
        line
        for line in (ROOT / "tests" / "constraints.txt").read_text().splitlines()
        if not line.startswith(("opentelemetry", "openinference"))
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="bench-pins-") as constraints:
        constraints.write("\n".join(pins) + "\n")
        constraints.flush()
        for name, packages in PEERS.items():
            venv = VENVS / name
            if not (venv / "bin" / "python").exists():
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = [str(venv / "bin" / "pip"), "install", "-q", "-c", constraints.name]
            subprocess.run([*pip, *COMMON, *packages, LITELLM], check=True)


CHILD = str(ROOT / "benchmarks/genai_calls/child.py")


@functools.cache
def _genai_python() -> str:
    """The interpreter of the google-genai tests' virtualenv (made if missing; checked once)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from tests.services import genai

    return str(genai.ensure_installed())


def child_setup(config: str, work: str, client: str = "openai") -> tuple[str, dict[str, str], str | None]:
    """The interpreter, environment and session directory (ours only) of ``config``'s child
    process working in ``work``, measuring ``client``."""
    _label, venv, extra = CONFIGS[config]
    python = str(VENVS / venv / "bin" / "python") if venv else sys.executable
    if client == "gemini-afc" and not venv:
        python = _genai_python()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_", "AGENT_TRACE_"))}
    env.update(extra)
    tree = BASE_TREE[0] if config == "ours-base" else str(ROOT)
    env["PYTHONPATH"] = os.pathsep.join([tree, str(ROOT / "benchmarks")])  # that tree first
    session_dir = None
    if config.startswith("ours"):
        session_dir = env["AGENT_TRACE_DIR"] = os.path.join(work, "sessions")
    return python, env, session_dir


def run_child(config: str, url: str, mode: str, opts: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-genai-calls-") as work:
        python, env, session_dir = child_setup(config, work, opts.get("client", "openai"))
        child_opts = dict(opts, work=work, session_dir=session_dir)
        cmd = [python, CHILD, config, url, mode, json.dumps(child_opts)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800, cwd=work)
    if done.returncode != 0 or not done.stdout.strip():
        tail = done.stderr.strip().splitlines()[-3:] or [f"exit {done.returncode}"]
        return {"error": " | ".join(tail)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--setup", action="store_true", help="create the peers' virtualenvs and exit")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--pairs", type=int, default=10, help="off/on block pairs per process")
    p.add_argument("--block", type=int, default=15, help="calls per block")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--configs", help="comma-separated (default: all)")
    p.add_argument("--modes", default="chat,stream")
    p.add_argument("--history", action="store_true", help="added cost at 400 vs 10 messages of 1 KB")
    p.add_argument(
        "--client",
        choices=CLIENTS,
        default="openai",
        help="the client measured",
    )
    p.add_argument("--json", help="write the raw results there")
    p.add_argument("--render", help="print the table of a results file written by --json, and exit")
    p.add_argument(
        "--base-tree",
        help="also run ours from this checkout (e.g. `git worktree add /tmp/base <commit>`): before/after",
    )
    args = p.parse_args(argv)
    if args.setup:
        setup_venvs()
        return 0
    if args.base_tree:
        _add_base(args.base_tree)
    if args.render:
        print(render_file(args.render))
        return 0
    opts = {"pairs": args.pairs, "block": args.block, "warmup": args.warmup, "client": args.client}
    if args.history:
        wanted = (args.configs or ",".join(HISTORY_CONFIGS)).split(",")
        configs = [c for c in wanted if c in HISTORY_CONFIGS and c in CONFIGS]
        opts |= {"histories": [10, 400], "size": 1024}
        modes = ["chat"]
    else:
        # (ours-base too, once --base-tree added it; not the references)
        default = [c for c in CONFIGS if c != "ours-spans" and not c.startswith("floor")]
        default = [c for c in default if c in peers_of(args.client)]
        configs = [c for c in (args.configs or ",".join(default)).split(",") if c]
        opts |= {"histories": [0]}
        modes = [m for m in args.modes.split(",") if m and ONE_MODE.get(args.client, m) == m]
    results: dict[str, dict[str, list[dict]]] = {m: {c: [] for c in configs} for m in modes}
    started = time.time()
    with StubServer() as server:
        for r in range(args.rounds):
            for mode in modes:
                order = configs[r % len(configs) :] + configs[: r % len(configs)]
                for config in order:
                    results[mode][config].append(run_child(config, server.url, mode, opts))
            print(f"round {r + 1}/{args.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr)
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "rounds": args.rounds,
        "pairs": args.pairs,
        "block": args.block,
        "base_tree": args.base_tree,
        "client": args.client,
        "raw": results,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(render_history(results) if args.history else render(results))
    return 0


def render_file(path: str) -> str:
    """The table of a results file written by ``--json``."""
    report = json.loads(Path(path).read_text())
    if report.get("base_tree"):
        _add_base(report["base_tree"])
    results = report["raw"]
    return (
        render_history(results)
        if "10" in next(iter(next(iter(results.values())).values()))[0]
        else render(results)
    )


def _median(runs: list[dict], history: str, key: str) -> float:
    return statistics.median(r[history][key] for r in runs)


QUIET = 1.3  # a pair counts when its "off" block ran within 1.3x of the quietest blocks' time


def _quiet_floor(results: dict[str, dict[str, list[dict]]], mode: str, history: str) -> float:
    """The time of a call with nothing on when the machine was quiet: the 5th percentile of the
    "off" blocks of every configuration of this mode (the machine is shared: load comes and goes)."""
    offs = sorted(
        off
        for runs in results[mode].values()
        for r in runs
        if history in r
        for off, _on in r[history]["blocks"]
    )
    return offs[len(offs) // 20] if offs else 0.0


def added(
    results: dict[str, dict[str, list[dict]]], mode: str, config: str, history: str
) -> tuple[float, int]:
    """µs added per call: the median over the quiet pairs of all rounds of (on − off), and how many
    pairs were quiet. Pairs where the machine was busy (another build took the CPU for a while) say
    nothing about the instrumentation; pairing cancels slow drift but not a block-long burst."""
    floor = _quiet_floor(results, mode, history)
    pairs = [
        on - off
        for r in results[mode][config]
        if history in r
        for off, on in r[history]["blocks"]
        if off <= QUIET * floor
    ]
    return (statistics.median(pairs) if pairs else float("nan")), len(pairs)


def render(results: dict[str, dict[str, list[dict]]]) -> str:
    lines = [
        "| configuration | chat µs added (quiet pairs) | stream µs added (quiet pairs) | spans/call"
        " | span bytes/call"
        " | session-file bytes/call |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    modes = list(results)
    configs = list(results[modes[0]])
    for config in configs:
        cells = []
        first = None
        for mode in ("chat", "stream"):
            runs = results.get(mode, {}).get(config, [])
            errors = [r["error"] for r in runs if "error" in r]
            ok = [r for r in runs if "error" not in r]
            if errors and not ok:
                cells.append(f"error: {errors[0][:80]}")
                continue
            if ok:
                value, n = added(results, mode, config, "0")
                cells.append(f"{value:+.0f} ({n})")
            else:
                cells.append("")
            first = first or ok
        spans = f"{_median(first, '0', 'spans_per_call'):.2f}" if first else ""
        span_bytes = f"{_median(first, '0', 'span_bytes_per_call'):,.0f}" if first else ""
        session = f"{_median(first, '0', 'session_bytes_per_call'):,.0f}" if first else ""
        lines.append(f"| {CONFIGS[config][0]} | {' | '.join(cells)} | {spans} | {span_bytes} | {session} |")
    return "\n".join(lines)


def render_history(results: dict[str, dict[str, list[dict]]]) -> str:
    lines = [
        "| configuration | µs added, 10 messages | µs added, 400 messages | ratio"
        " | session bytes/call (10 / 400) |",
        "|---|---:|---:|---:|---:|",
    ]
    for config, runs in results["chat"].items():
        ok = [r for r in runs if "error" not in r]
        if not ok:
            lines.append(f"| {CONFIGS[config][0]} | error: {runs[0].get('error', '')[:80]} | | | |")
            continue
        (a, na), (b, nb) = added(results, "chat", config, "10"), added(results, "chat", config, "400")
        ratio = b / a
        sa, sb = _median(ok, "10", "session_bytes_per_call"), _median(ok, "400", "session_bytes_per_call")
        cells = [f"{a:+.0f} ({na})", f"{b:+.0f} ({nb})", f"{ratio:.2f}×", f"{sa:,.0f} / {sb:,.0f}"]
        lines.append(f"| {CONFIGS[config][0]} | {' | '.join(cells)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
