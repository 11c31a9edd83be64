"""A small agent that runs offline, for trying otel-agent-trace.

THE MODEL IS SCRIPTED: ``ScriptedModel`` below replays a fixed list of decisions instead of
calling a real LLM, so the demo needs no API key and no network. The tools are real: they read
files and run a command in this directory.

Run it recorded, with nothing else set up::

    opentelemetry-instrument python examples/demo_agent.py

and look at ``agent-sessions/`` (``otel-agent-trace list``, ``otel-agent-trace view <file>``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import otel_agent_trace as oat

HERE = Path(__file__).resolve().parent
SYSTEM_PROMPT = "You are a careful coding agent. Use tools to look before you answer."


@oat.tool
def list_files(directory: str) -> list[str]:
    """List the files of a directory."""
    return sorted(p.name for p in Path(directory).iterdir())


@oat.tool
def read_file(path: str, max_chars: int = 400) -> str:
    """Read the start of a text file."""
    with open(path, encoding="utf-8") as handle:
        return handle.read(max_chars)


@oat.tool
def run_command(argv: list[str]) -> dict[str, object]:
    """Run a command and return its exit code and output."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return {"exit_code": done.returncode, "stdout": done.stdout[-400:], "stderr": done.stderr[-400:]}


TOOLS = {"list_files": list_files, "read_file": read_file, "run_command": run_command}


class ScriptedModel:
    """A stand-in for an LLM (clearly not one): returns pre-written turns in order."""

    name = "scripted-demo-model"

    def __init__(self) -> None:
        self._turns = [
            {"tool": "list_files", "arguments": {"directory": str(HERE)}},
            {"tool": "read_file", "arguments": {"path": str(HERE / "demo_agent.py"), "max_chars": 300}},
            {"tool": "run_command", "arguments": {"argv": [sys.executable, "--version"]}},
            {"answer": "The examples folder holds a scripted demo agent; Python runs fine here."},
        ]

    def complete(self, messages: list[dict[str, str]]) -> dict[str, object]:
        return self._turns[min(sum(m["role"] == "assistant" for m in messages), len(self._turns) - 1)]


@oat.agent("demo-agent")
def run_agent(task: str) -> str:
    model = ScriptedModel()
    messages: list[dict[str, str]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task},
    ]
    oat.record_message("system", SYSTEM_PROMPT)
    oat.record_message("user", task)
    for step in range(1, 10):
        decision = model.complete(messages)
        if "answer" in decision:
            messages.append({"role": "assistant", "content": str(decision["answer"])})
            oat.record_message("assistant", decision["answer"])
            oat.snapshot(
                "final answer",
                messages=messages,
                system_prompt=SYSTEM_PROMPT,
                last_query=task,
                last_result=decision["answer"],
                model_info={"type": "scripted", "model_id": model.name, "provider": "none"},
            )
            return str(decision["answer"])
        call = json.dumps({"tool": decision["tool"], "arguments": decision["arguments"]})
        messages.append({"role": "assistant", "content": call})
        result = TOOLS[str(decision["tool"])](**decision["arguments"])  # type: ignore[arg-type]
        messages.append({"role": "tool", "content": json.dumps(result)[:2000]})
        oat.snapshot(
            f"after step {step}: {decision['tool']}",
            messages=messages,
            system_prompt=SYSTEM_PROMPT,
            last_query=task,
            model_info={"type": "scripted", "model_id": model.name},
        )
    return "gave up"


def main() -> None:
    print(run_agent("What is in the examples folder, and does Python run?"))


if __name__ == "__main__":
    main()
