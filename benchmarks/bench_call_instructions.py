"""Instructions added per OpenAI model call, ours against the peers, counted exactly.

The timed benchmark (``bench_genai_calls.py``) is at the mercy of a shared machine's load; this
one counts the CPU instructions of the whole child process (every thread: the recorder's flusher
too) under ``valgrind --tool=callgrind``, which do not depend on the load. Same child, same
client, stub and OTLP file export as ``bench_genai_calls.py``; per configuration and mode, two
runs of N_LO and N_HI calls, and the instructions per call are (I(N_HI) − I(N_LO)) / (N_HI −
N_LO), so start-up, warm-up and the handshake around the calls cancel: every instruction of the
process is counted (start-up repeats to ~10 k instructions). Switching valgrind's instrumentation
on and off around the calls with ``callgrind_control`` (as this did until 2026-12-04) is not
exact: the switch can land after the first call has begun, and one such run counted ours 157 M
instructions below no instrumentation. "Added" is that minus the same figure with no
instrumentation. The session ZIP written at exit is left out (``AGENT_TRACE_ZIP=0``; its cost is
in ``docs/benchmarks/zip.md``); the session file is written.

    python benchmarks/bench_genai_calls.py --setup                 # the peers' virtualenvs, once
    python benchmarks/bench_call_instructions.py --configs none,contrib,ours --json out.json
    python benchmarks/bench_call_instructions.py --client bedrock --configs none,bare,ours   # boto3 converse

``--client`` takes every client of ``bench_genai_calls.py`` (``ollama-embed`` in its one mode,
``gemini-afc`` in the google-genai tests' virtualenv); the peers instrument ``openai``, and
``openinference-litellm`` LiteLLM (``--client litellm``, where the openai peers run on the openai
client under ``litellm.completion``). The "spans per call" column shows what each configuration
exported per counted call: a peer that made no span instrumented nothing, and is no bound.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_genai_calls import CHILD, CLIENTS, CONFIGS, ONE_MODE, _add_base, child_setup  # noqa: E402
from genai_calls.stub_server import StubServer  # noqa: E402

_TOTAL = re.compile(rb"^(?:summary|totals):\s*(\d+)", re.MULTILINE)


def count(
    config: str,
    url: str,
    mode: str,
    calls: int,
    warmup: int,
    history: int = 0,
    shape: str = "text",
    client: str = "openai",
) -> dict:
    """Instructions of one child process making ``calls`` calls (after ``warmup``), each with
    ``history`` messages of 1 KB before its question (``shape``: see ``child._messages``)."""
    with tempfile.TemporaryDirectory(prefix="bench-call-instr-") as work:
        python, env, _session_dir = child_setup(config, work, client)
        env["AGENT_TRACE_ZIP"] = "0"
        env["PYTHONHASHSEED"] = "0"
        opts = {"work": work, "session_dir": None, "histories": [history], "size": 1024, "shape": shape}
        opts |= {"count": calls, "warmup": warmup, "block": 1, "pairs": 1, "client": client}
        out = os.path.join(work, "callgrind.out")
        # The whole process is counted; start-up and warm-up cancel between N_LO and N_HI.
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        cmd += [python, CHILD, config, url, mode, json.dumps(opts)]
        out_path, err_path = os.path.join(work, "stdout"), os.path.join(work, "stderr")
        with open(out_path, "w") as stdout, open(err_path, "w") as stderr:
            proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=env, cwd=work)
            try:
                for step in ("ready", "done"):
                    _wait_for(os.path.join(work, step), proc)
                    Path(work, step + ".ok").touch()
                proc.wait(timeout=600)
            finally:
                if proc.poll() is None:
                    proc.kill()
        stderr_text = Path(err_path).read_text()
        if proc.returncode != 0 or not os.path.exists(out):
            raise SystemExit(f"{config} {mode} {calls}: " + " | ".join(stderr_text.strip().splitlines()[-3:]))
        totals = _TOTAL.findall(Path(out).read_bytes())
        result = json.loads(Path(out_path).read_text().strip().splitlines()[-1])
    return {"instructions": int(totals[-1]), "spans": result["spans"], "span_bytes": result["span_bytes"]}


def _wait_for(path: str, proc: subprocess.Popen) -> str:
    """The child's pid, once it has written ``path``."""
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise SystemExit(f"the child exited ({proc.returncode}) before {os.path.basename(path)}")
        time.sleep(0.05)
    time.sleep(0.05)  # (written whole: a few bytes)
    return Path(path).read_text().strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--configs", default="none,bare,contrib,contrib-content,ours,ours-both")
    p.add_argument("--modes", default="chat,stream")
    p.add_argument("--calls", default="20,120", help="N_LO,N_HI")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--base-tree", help="also count ours from this checkout (config ours-base)")
    p.add_argument(
        "--history",
        action="store_true",
        help="chat calls with 10 and with 400 messages of 1 KB before the question (configs as given)",
    )
    p.add_argument(
        "--shape",
        choices=("text", "agent", "window"),
        default="text",
        help="with --history: text messages, a tool-calling loop holding the SDK's message objects, "
        "or that loop in a sliding window (a turn dropped and one added per call)",
    )
    p.add_argument("--client", choices=CLIENTS, default="openai", help="the client measured")
    p.add_argument("--jobs", type=int, default=1, help="processes counted at once (the counts stay exact)")
    p.add_argument("--json", help="write the raw counts there")
    args = p.parse_args(argv)
    if args.base_tree:
        _add_base(args.base_tree)
    configs = [c for c in args.configs.split(",") if c]
    if "none" not in configs:
        configs.insert(0, "none")
    lo, hi = (int(n) for n in args.calls.split(","))
    raw: dict[str, dict[str, dict[str, dict]]] = {}
    started = time.time()
    # --history: the "modes" are chat calls after 10 and after 400 messages
    modes = ["10 messages", "400 messages"] if args.history else args.modes.split(",")
    modes = [m for m in modes if ONE_MODE.get(args.client, m) == m or args.history]
    runs = [(mode, config, n) for mode in modes for config in configs for n in (lo, hi)]
    counts: dict[tuple[str, str, int], dict] = {}

    def one(run: tuple[str, str, int]) -> None:
        mode, config, n = run
        call_mode, history = ("chat", int(mode.split()[0])) if args.history else (mode, 0)
        counts[run] = count(config, server.url, call_mode, n, args.warmup, history, args.shape, args.client)
        done = counts[run]  # (the counts as they come: a long run stopped early is not lost)
        print(f"{mode} {config} {n} calls done ({time.time() - started:.0f} s): {done}", file=sys.stderr)

    with StubServer() as server, ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, runs))  # (the counts do not depend on what else runs: --jobs is wall time)
    for mode, config, n in runs:
        raw.setdefault(mode, {}).setdefault(config, {})[str(n)] = counts[(mode, config, n)]
    report = {"machine": {"python": platform.python_version()}, "calls": [lo, hi], "raw": raw}
    report["client"] = args.client
    if args.history:
        report["shape"] = args.shape
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(render(report))
    return 0


def render(report: dict) -> str:
    """The table: instructions added per call (per mode), and their ratio to contrib's; with
    ``--history``, also the ratio of the added instructions at 400 messages to those at 10."""
    lo, hi = report["calls"]
    modes = list(report["raw"])
    history = modes == ["10 messages", "400 messages"]
    per: dict[str, dict[str, float]] = {}
    for mode in modes:
        for config, runs in report["raw"][mode].items():
            di = runs[str(hi)]["instructions"] - runs[str(lo)]["instructions"]
            per.setdefault(config, {})[mode] = di / (hi - lo)
    none = per["none"]

    def spans(mode: str, config: str) -> float:
        return report["raw"][mode][config][str(hi)]["spans"] / hi

    head = ["configuration"] + [f"{m}: added per call" for m in modes]
    head += [f"{m}: to contrib" for m in modes if "contrib" in per]
    head += [f"{m}: spans per call" for m in modes]
    if history:
        head.append("400 / 10 messages")
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for config, figures in per.items():
        if config == "none":
            cells = [f"{figures[m]:,.0f} (the call itself)" for m in modes]
            cells += [""] * (len(head) - 1 - 2 * len(modes))
        else:
            added = {m: figures[m] - none[m] for m in modes}
            cells = [f"{added[m]:+,.0f}" for m in modes]
            if "contrib" in per:
                cells += [_ratio(added[m], per["contrib"][m] - none[m], spans(m, "contrib")) for m in modes]
            if history:
                cells.append(f"{added[modes[1]] / added[modes[0]]:.2f}×")
        cells += [f"{spans(m, config):.2f}" for m in modes]
        lines.append(f"| {CONFIGS[config][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ratio(added: float, contrib_added: float, contrib_spans: float) -> str:
    """``added`` to contrib's, or why not: a contrib that exported no span (``litellm.completion``
    goes around the openai method it wraps) did not instrument the call, and is no bound."""
    if not contrib_spans:
        return "— (contrib: no span)"
    return f"{added / contrib_added:.2f}×"


if __name__ == "__main__":
    sys.exit(main())
