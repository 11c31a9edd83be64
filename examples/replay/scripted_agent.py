"""A small agent with a SCRIPTED model (no LLM, no network) and real ``@oat.tool`` tools, for
trying replay, fork and resume::

    cd examples/replay
    AGENT_TRACE_TIER=both opentelemetry-instrument python scripted_agent.py
    otel-agent-trace replay agent-sessions/<session>.checkpoint.jsonl --execute-tools --workspace /tmp/ws \
        --tools-from notes_tools

It writes a note in its working directory, reads it back, counts its words, asks a child process
for the Python version and tries a division by zero (which fails, and is recorded as failed).
"""

from __future__ import annotations

import json

from notes_tools import count_words, divide, python_version, read_note, write_note

import otel_agent_trace as oat

SYSTEM_PROMPT = "You keep notes. Use the tools."
TASK = "Write a note about replay, read it back and count its words."
NOTE = "Replay runs the recorded tools again and compares what they return."

# The scripted decisions: (tool, arguments), then the answer.
SCRIPT = [
    (write_note, {"path": "note.txt", "text": NOTE}),
    (read_note, {"path": "note.txt"}),
    (count_words, {"text": NOTE}),
    (python_version, {}),
    (divide, {"a": 1, "b": 0}),
]


@oat.agent("notes-agent")
def run(task: str = TASK) -> str:
    messages: list[dict[str, str]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task},
    ]
    for m in messages:
        oat.record_message(m["role"], m["content"])
    for step, (tool, arguments) in enumerate(SCRIPT, 1):
        call = {"role": "assistant", "content": json.dumps({"tool": tool.__name__, "arguments": arguments})}
        messages.append(call)
        oat.record_message(call["role"], call["content"])
        try:
            result = json.dumps(tool(**arguments))
        except ZeroDivisionError as exc:
            result = f"error: {exc}"
        messages.append({"role": "tool", "content": result})
        oat.record_message("tool", result)
        oat.snapshot(
            f"after step {step}: {tool.__name__}",
            messages=messages,
            system_prompt=SYSTEM_PROMPT,
            last_query=task,
            model_info={"type": "scripted", "model_id": "script"},
        )
    answer = f"The note has {len(NOTE.split())} words."
    messages.append({"role": "assistant", "content": answer})
    oat.record_message("assistant", answer)
    oat.snapshot(
        "final answer",
        messages=messages,
        system_prompt=SYSTEM_PROMPT,
        last_query=task,
        last_result=answer,
        model_info={"type": "scripted", "model_id": "script"},
    )
    return answer


if __name__ == "__main__":
    print(run())
