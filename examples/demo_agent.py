"""A small agent that runs offline, for trying otel-agent-trace.

THE MODEL IS A DEMO MODEL, NOT AN LLM: ``demo_model.py`` is a local server on 127.0.0.1 that
speaks the OpenAI chat completions API and answers from a fixed script. The agent talks to it
through the real ``openai`` client (``pip install '.[demo]'``), so the recording has real model
calls with tokens; no API key, no network. The tools are real: they list and read files and run
a command in this directory.

Run it recorded, with nothing else set up::

    opentelemetry-instrument python examples/demo_agent.py

and look at ``agent-sessions/`` (``otel-agent-trace list``, ``otel-agent-trace view <file>``).
Recorded in the checkpoint tier, it can be run again with every model call and tool call
answered from the recording (docs/model-replay.md); give it another task to see a divergence::

    AGENT_TRACE_TIER=checkpoint opentelemetry-instrument python examples/demo_agent.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --model-replay -- \\
        python examples/demo_agent.py ["another task"]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from demo_model import MODEL_NAME, DemoModelServer
from openai import OpenAI

import otel_agent_trace as oat

HERE = Path(__file__).resolve().parent
SYSTEM_PROMPT = "You are a careful coding agent. Use tools to look before you answer."
TASK = "What is in the examples folder, and does Python run?"

# What the demo model will do, turn by turn (it does not read the tools' results).
SCRIPT: list[dict[str, Any]] = [
    {"tool": "list_files", "arguments": {"directory": str(HERE)}},
    {"tool": "read_file", "arguments": {"path": str(HERE / "demo_agent.py"), "max_chars": 300}},
    {"tool": "run_command", "arguments": {"argv": [sys.executable, "--version"]}},
    {"answer": "The examples folder holds a demo agent and its demo model; Python runs fine here."},
]


def list_files(directory: str) -> list[str]:
    """List the files of a directory."""
    return sorted(p.name for p in Path(directory).iterdir())


def read_file(path: str, max_chars: int = 400) -> str:
    """Read the start of a text file."""
    with open(path, encoding="utf-8") as handle:
        return handle.read(max_chars)


def run_command(argv: list[str]) -> dict[str, object]:
    """Run a command and return its exit code and output."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return {"exit_code": done.returncode, "stdout": done.stdout[-400:], "stderr": done.stderr[-400:]}


TOOLS = {"list_files": list_files, "read_file": read_file, "run_command": run_command}
EFFECTS = {"run_command": ("shell",)}
TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": fn.__doc__,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
    for name, fn in TOOLS.items()
]


@oat.agent("demo-agent")
def run_agent(task: str, model_url: str) -> str:
    client = OpenAI(base_url=model_url, api_key="demo-model-needs-no-key")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task},
    ]
    for _ in range(10):
        reply = client.chat.completions.create(model=MODEL_NAME, messages=messages, tools=TOOL_SCHEMAS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            # A tool span with the model's call id; in a model replay, answered from the recording
            # (the tool does not run: the recording chose these arguments).
            name = call.function.name
            tool = oat.tool(name, call_id=call.id, effects=EFFECTS.get(name, ()))(TOOLS[name])
            result = tool(**arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)[:2000]})
    return "gave up"


def main() -> None:
    task = " ".join(sys.argv[1:]) or TASK
    with DemoModelServer(SCRIPT) as model:
        print(run_agent(task, model.base_url))


if __name__ == "__main__":
    main()
