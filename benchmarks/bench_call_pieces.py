"""Where ours' cost of a model call goes, one function at a time, counted exactly.

Each piece runs in a child process under ``valgrind --tool=callgrind`` that makes ``--calls``
OpenAI chat calls through ours (``initialize()``, as ``opentelemetry-instrument`` sets it up,
the session file written) with ``Completions.create`` answering a recorded tool-call response at
once (no HTTP, no OTLP exporter: ours alone). The function named by a piece
(``module:Qualified.name``) is wrapped so each of its calls runs under ``sys.call_tracing``, and
callgrind counts only inside that (``--toggle-collect``); the piece ``call`` counts the whole
call. Printed: instructions per model call (a piece's own calls included, the wrapper's few
hundred too).

    python benchmarks/bench_call_pieces.py                       # the pieces below
    python benchmarks/bench_call_pieces.py call otel_agent_trace.recording.recorder:SessionRecorder.snapshot
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_R = "otel_agent_trace.recording.recorder:SessionRecorder"
_M = "otel_agent_trace.instrumentation._genai.model_call"
_C = "otel_agent_trace.instrumentation.openai.chat:ChatSpec"
PIECES = [
    "call",
    f"{_M}:begin",
    f"{_C}.input",
    f"{_C}.result",
    f"{_M}:ModelCall._record_content",
    f"{_R}.snapshot",
    "otel_agent_trace.recording.message_store:MessageStore.message_ids",
    "otel_agent_trace.recording.message_store:MessageStore.message_entry",
    f"{_R}.on_span_end",
    f"{_R}._end_span",
    "otel_agent_trace.redaction.values:Redactor._attributes",
    "otel_agent_trace.recording.span_content:SpanContent.fields",
    "otel_agent_trace.recording.writer:TierWriter._said_before",
]

_CHILD = """
import importlib, json, sys
calls, piece, history = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
from genai_calls.stub_server import RECORDINGS
from genai_calls.child import _messages, MODEL
from openai.types.chat import ChatCompletion
from openai.resources.chat.completions import Completions
recorded = json.loads((RECORDINGS / "openai_chat_tool_call.json").read_text())["json"]
canned = ChatCompletion.model_validate(recorded)
Completions.create = lambda self, **kw: canned
from opentelemetry import trace
from opentelemetry.instrumentation.auto_instrumentation import initialize
initialize()
import openai
provider = trace.get_tracer_provider()
client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-bench")
tools = [{"type": "function", "function": {"name": "get_weather", "description": "w",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
conv = _messages(history, 1024, "text")
n = [0]
def call():
    n[0] += 1
    question = {"role": "user", "content": f"q {n[0]}"}
    client.chat.completions.create(model=MODEL, messages=conv + [question], tools=tools)
    provider.force_flush()
for _ in range(5):
    call()
if piece == "call":
    sys.call_tracing(lambda: [call() for _ in range(calls)], ())
else:
    module, qualified = piece.split(":")
    owner = importlib.import_module(module)
    *path, name = qualified.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    setattr(owner, name, lambda *a, **k: sys.call_tracing(lambda: original(*a, **k), ()))
    for _ in range(calls):
        call()
"""


def count(piece: str, calls: int, history: int) -> int:
    """Instructions per call of ``piece`` (see the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="bench-call-pieces-") as work:
        out = os.path.join(work, "callgrind.out")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
        env |= {
            "AGENT_TRACE_DIR": os.path.join(work, "sessions"),
            "AGENT_TRACE_ZIP": "0",
            "PYTHONHASHSEED": "0",
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")]),
        }
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=sys_call_tracing*",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            _CHILD,
            str(calls),
            piece,
            str(history),
        ]
        subprocess.run(cmd, env=env, cwd=work, check=True, capture_output=True)
        totals = re.findall(rb"^totals:\s*(\d+)", Path(out).read_bytes(), re.M)
        return int(totals[-1]) // calls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("pieces", nargs="*", help="module:Qualified.name, or call (default: a list)")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--history", type=int, default=2, help="messages of 1 KB before the question")
    args = parser.parse_args()
    for piece in args.pieces or PIECES:
        print(f"{count(piece, args.calls, args.history):>10,}  {piece}", flush=True)


if __name__ == "__main__":
    main()
