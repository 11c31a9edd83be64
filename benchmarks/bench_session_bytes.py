"""Session-file bytes per model call and per tool call, and the file's growth with the conversation.

A real agent loop runs under the real ``opentelemetry-instrument`` (the ``agent_trace`` distro,
every instrumentation on, the session file written as users get it; OTLP exporters off: only the
file is measured) in a subprocess: the real ``openai`` client asks the local replay server
(tests/fakes/llm_server.py) for a tool call, the conversation grows by the assistant's message and
a tool result each turn, and a ``@oat.tool`` function is called with a 200-character argument.
The child reads the session file's size around every call (after writing what is queued).

    python benchmarks/bench_session_bytes.py                  # trace tier; 10/100/400 calls
    python benchmarks/bench_session_bytes.py --tier both --content
    python benchmarks/bench_session_bytes.py --pythonpath /tmp/base-tree   # another checkout's code
    python benchmarks/bench_session_bytes.py --window 400 --turns 300      # a sliding window

With ``--window N`` the conversation is kept in a sliding window, as Strands'
``SlidingWindowConversationManager`` or LangChain's ``trim_messages`` keep one: the system prompt,
then the latest N messages (the oldest dropped from position 1 as each turn adds two).

Bytes per call are the mean over the first ``--short`` calls (a short conversation) of the file's
growth across a model call (everything it writes: its start, the ``POST`` under it, new messages,
the automatic snapshot, its events and end) and across a tool call. The growth of the file with
the conversation is its size after 10, 100 and 400 turns (one model call and one tool call each).
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
INSTRUMENT = str(Path(sys.executable).parent / "opentelemetry-instrument")

CHILD = r"""
import json, os, sys
from pathlib import Path
import openai
import otel_agent_trace as oat
from otel_agent_trace._internal import sink
from tests.fakes.llm_server import FakeLLMServer

turns, marks, short = int(sys.argv[1]), set(json.loads(sys.argv[2])), int(sys.argv[3])
fixed = sys.argv[4] == "fixed"  # the same request every call (the conversation does not grow)
latency = float(sys.argv[5]) / 1000  # the model's time to answer, in seconds
window = int(sys.argv[6])  # keep the system prompt and the latest ``window`` messages (0: all)
directory = Path(os.environ["AGENT_TRACE_DIR"])


@oat.tool
def lookup(query: str) -> str:
    "Look something up."
    return "found: " + query[:40]


def size() -> int:
    rec = sink.active()
    if rec is not None:
        rec.flush()
    return sum(p.stat().st_size for p in directory.glob("session-*.jsonl"))


if latency:  # a model that takes its time (the session's flusher writes a running call's start)
    import time
    from tests.fakes import llm_server

    answer = llm_server._Handler.do_POST

    def slow(self):
        time.sleep(latency)
        answer(self)

    llm_server._Handler.do_POST = slow
server = FakeLLMServer().start()
client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
messages = [
    {"role": "system", "content": "You are a careful agent. " * 40},
    {"role": "user", "content": "Find out what the weather is in Paris, then keep going."},
]
model_bytes, tool_bytes, sizes = [], [], {}
for turn in range(1, turns + 1):
    server.queue("openai_chat_tool_call")
    before = size()
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    after = size()
    model_bytes.append(after - before)
    call = reply.choices[0].message.tool_calls[0]
    result = lookup(f"turn {turn:04d} " + "q" * 190)
    tool_bytes.append(size() - after)
    if not fixed:
        messages.append({"role": "assistant", "content": None, "tool_calls": [call.model_dump()]})
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result + " " + "r" * 150})
        if window and len(messages) - 1 > window:
            del messages[1 : len(messages) - window]
    if turn in marks:
        sizes[turn] = size()
server.stop()
print(json.dumps({
    "model_call_bytes": sum(model_bytes[:short]) / min(short, len(model_bytes)),
    "tool_call_bytes": sum(tool_bytes[:short]) / min(short, len(tool_bytes)),
    "model_call_bytes_all": sum(model_bytes) / len(model_bytes),
    "model_call_bytes_last": model_bytes[-1],
    "model_call_bytes_tail": sum(model_bytes[-short:]) / min(short, len(model_bytes)),
    "messages_last": len(messages),
    "file_bytes": sizes,
}))
"""


def run(
    turns: int,
    marks: list[int],
    short: int,
    tier: str,
    content: bool,
    pythonpath: str,
    fixed: bool,
    latency_ms: float = 0,
    window: int = 0,
) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-bytes-") as tmp:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OTEL_", "AGENT_TRACE_")) and k not in ("PYTHONPATH", "TRACEPARENT")
        }
        env.update(
            PYTHONPATH=os.pathsep.join([pythonpath, str(ROOT)]),
            AGENT_TRACE_DIR=tmp,
            AGENT_TRACE_TIER=tier,
            AGENT_TRACE_ZIP="false",
            OTEL_TRACES_EXPORTER="none",
            OTEL_METRICS_EXPORTER="none",
            OTEL_LOGS_EXPORTER="none",
        )
        if content:
            env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        done = subprocess.run(
            [
                INSTRUMENT,
                sys.executable,
                "-c",
                CHILD,
                str(turns),
                json.dumps(marks),
                str(short),
                "fixed" if fixed else "grows",
                str(latency_ms),
                str(window),
            ],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode:
            raise SystemExit(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tier", default="trace", choices=["trace", "checkpoint", "both"])
    parser.add_argument("--content", action="store_true", help="message content capture on")
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--short", type=int, default=10, help="calls averaged for bytes per call")
    parser.add_argument("--pythonpath", default=str(ROOT), help="the checkout whose code is measured")
    parser.add_argument(
        "--fixed", action="store_true", help="the same request every call (no growing conversation)"
    )
    parser.add_argument("--latency-ms", type=float, default=0, help="the model's time to answer (0: at once)")
    parser.add_argument(
        "--window", type=int, default=0, help="keep the system prompt and the latest N messages (0: all)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    marks = [n for n in (10, 100, 400) if n <= args.turns]
    result = run(
        args.turns,
        marks,
        args.short,
        args.tier,
        args.content,
        args.pythonpath,
        args.fixed,
        args.latency_ms,
        args.window,
    )
    if args.json:
        print(json.dumps(result))
        return
    label = (
        f"tier {args.tier}"
        + (", content on" if args.content else "")
        + (", the same request every call" if args.fixed else ", a growing conversation")
        + (f", the model answers in {args.latency_ms:g} ms" if args.latency_ms else "")
        + (f", kept in a window of {args.window} messages" if args.window else "")
        + f", code {args.pythonpath}"
    )
    print(label)
    print(f"  bytes per model call (first {args.short}): {result['model_call_bytes']:,.0f}")
    print(f"  bytes per tool call (first {args.short}):  {result['tool_call_bytes']:,.0f}")
    print(f"  bytes per model call (all {args.turns}):   {result['model_call_bytes_all']:,.0f}")
    print(f"  bytes of model call {args.turns}:        {result['model_call_bytes_last']:,}")
    print(f"  bytes per model call (last {args.short}):  {result['model_call_bytes_tail']:,.0f}")
    print(f"  messages in the conversation at the end: {result['messages_last']:,}")
    for turn, size in result["file_bytes"].items():
        print(f"  file after {turn:>4} turns: {size:>12,} bytes ({size / int(turn):,.0f} per turn)")


if __name__ == "__main__":
    main()
