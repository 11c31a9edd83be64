"""Our instrumentation alone, per OpenAI chat call, at 10 and 400 messages of 1 KB: counted exactly.

``bench_call_instructions.py --history`` counts what users run, the real client's call included,
and that call costs ~600 M instructions at 400 messages (the SDK transforms every message), so
ours' few hundred thousand more sit in its noise. Here ``Completions.create`` itself is replaced by
one returning a recorded response, before ``opentelemetry-instrument``'s ``initialize()`` wraps it:
what is counted is the capture, the spans and the session file of each call, nothing else (no
HTTP request, so no HTTP span). The calls run inside ``sys.call_tracing``, and callgrind collects
only there (``--toggle-collect``): start-up, imports and warm-up are not counted, and the counts
repeat to a few hundred instructions. Only the calling thread is counted (the recorder writes on
it).

    python benchmarks/bench_history_alone.py                      # text and agent shapes
    python benchmarks/bench_history_alone.py --base-tree /tmp/base --shapes text,window

Prints, per shape and tree, the instructions of one call at each history and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_call_instructions import _TOTAL  # noqa: E402
from bench_genai_calls import _add_base, child_setup  # noqa: E402


def child(history: int, calls: int, shape: str) -> None:
    """Warm up, then ``calls`` calls inside ``sys.call_tracing`` (where callgrind counts)."""
    import openai
    from genai_calls.child import MODEL, _messages, _window
    from genai_calls.stub_server import RECORDINGS
    from openai.resources.chat.completions import Completions
    from openai.types.chat import ChatCompletion
    from opentelemetry import trace
    from opentelemetry.instrumentation.auto_instrumentation import initialize

    recorded = json.loads((RECORDINGS / "openai_chat_tool_call.json").read_text())["json"]
    response = ChatCompletion.model_validate(recorded)
    Completions.create = lambda self, **kwargs: response  # (before initialize() wraps it)
    initialize()
    provider = trace.get_tracer_provider()
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-bench")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    window = shape == "window"
    conv = _messages(0 if window else history, 1024, shape)
    state = {"n": 0}

    def call() -> None:
        state["n"] += 1
        sent = _window(conv, history, 1024, state["n"]) if window else conv
        messages = sent + [{"role": "user", "content": f"What is the weather? ({state['n']})"}]
        client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        provider.force_flush()

    for _ in range(5):
        call()
    sys.call_tracing(lambda: [call() for _ in range(calls)], ())


def count(tree: str, history: int, calls: int, shape: str) -> int:
    """The instructions of ``calls`` calls at ``history`` messages, ours from ``tree``."""
    with tempfile.TemporaryDirectory(prefix="bench-history-alone-") as work:
        if tree != str(ROOT):
            _add_base(tree)
        python, env, _session_dir = child_setup("ours" if tree == str(ROOT) else "ours-base", work)
        env |= {"AGENT_TRACE_ZIP": "0", "PYTHONHASHSEED": "0"}
        out = os.path.join(work, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=sys_call_tracing*"]
        cmd += [f"--callgrind-out-file={out}", python, __file__, "--child"]
        cmd += [str(history), str(calls), shape]
        done = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0 or not os.path.exists(out):
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise SystemExit(f"{tree} {shape} {history}: {tail}")
        return int(_TOTAL.findall(Path(out).read_bytes())[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", nargs=3, metavar=("HISTORY", "CALLS", "SHAPE"), help=argparse.SUPPRESS)
    p.add_argument("--shapes", default="text,agent", help="text, agent, window (see genai_calls/child.py)")
    p.add_argument("--histories", default="10,400")
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--base-tree", help="also count ours from this checkout")
    p.add_argument("--json", help="write the counts there")
    args = p.parse_args(argv)
    if args.child:
        child(int(args.child[0]), int(args.child[1]), args.child[2])
        return 0
    trees = {"ours": str(ROOT)} | ({"ours-base": args.base_tree} if args.base_tree else {})
    histories = [int(h) for h in args.histories.split(",")]
    report: dict = {"calls": args.calls, "histories": histories, "trees": trees, "counts": {}}
    print(f"| shape | tree | {' | '.join(f'{h} messages' for h in histories)} | ratio |")
    print("|---|---|" + "---:|" * (len(histories) + 1))
    for shape in args.shapes.split(","):
        for name, tree in trees.items():
            per_call = [count(tree, h, args.calls, shape) / args.calls for h in histories]
            report["counts"][f"{shape} {name}"] = per_call
            cells = " | ".join(f"{c:,.0f}" for c in per_call)
            print(f"| {shape} | {name} | {cells} | {per_call[-1] / per_call[0]:.2f}× |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
