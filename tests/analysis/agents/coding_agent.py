"""A small coding agent for the analysis tests: a real OpenAI client, real tools, real processes.

The model is the local replay server the test starts (``FAKE_OPENAI_URL``); what it answers —
which tools to call with which arguments, errors, the final answer — is the test's script. The
agent runs every tool the model asks for, as a real agent loop does, in the current directory.
``AGENT_CRASH_AFTER=N`` kills the process (``os._exit``) as it is about to run the N-th tool
call; ``AGENT_MAX_TURNS`` (default 12) bounds the model turns, after which the agent raises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import openai

import otel_agent_trace as oat

CRASH_AFTER = int(os.environ.get("AGENT_CRASH_AFTER", "0"))
MAX_TURNS = int(os.environ.get("AGENT_MAX_TURNS", "12"))
_calls = 0


@oat.tool
def write_file(path: str, text: str) -> str:
    """Write a text file."""
    Path(path).write_text(text)
    return f"wrote {len(text)} chars"


@oat.tool
def read_file(path: str) -> str:
    """Read a text file."""
    return Path(path).read_text()


@oat.tool
def run_shell(command: str) -> dict[str, object]:
    """Run a shell command."""
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    return {"exit_code": done.returncode, "output": (done.stdout + done.stderr)[-300:]}


TOOLS = {"write_file": write_file, "read_file": read_file, "run_shell": run_shell}
SCHEMAS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in TOOLS
]


def main() -> None:
    global _calls
    client = openai.OpenAI(base_url=os.environ["FAKE_OPENAI_URL"], api_key="sk-test", max_retries=0)
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": sys.argv[1] if len(sys.argv) > 1 else "Fix the bug."},
    ]
    with oat.agent("coder"):
        for _turn in range(MAX_TURNS):
            try:
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
            except openai.APIError as exc:
                messages.append({"role": "user", "content": f"(model error {exc.__class__.__name__}, retry)"})
                continue
            message = reply.choices[0].message
            if not message.tool_calls:
                print(message.content)
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                _calls += 1
                if CRASH_AFTER and _calls >= CRASH_AFTER:
                    os._exit(3)
                try:
                    result = TOOLS[call.function.name](**json.loads(call.function.arguments))
                except Exception as exc:  # the model sees the error, as in a real agent
                    result = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        raise RuntimeError(f"gave up: max turns ({MAX_TURNS}) reached")


if __name__ == "__main__":
    main()
