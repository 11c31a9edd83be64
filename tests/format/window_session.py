"""A conversation kept in a sliding window (the system prompt, then the latest turns; the oldest
dropped as each new one comes), snapshotted each turn through the public API with every source of
variation fixed: ``python -m tests.format.window_session DIR TIER``. On the way a message in the
window is replaced, the oldest turns are replaced by a summary, and a note is put in the middle.

``tests/format/fixtures/v1_2/window*.jsonl`` were recorded by the format-1.2 recorder (b7343c7) from
this file: ``PYTHONPATH=<checkout of b7343c7> python tests/format/window_session.py DIR TIER``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import otel_agent_trace as oat
from otel_agent_trace import testing
from otel_agent_trace.settings import Settings

TURNS = 30
WINDOW = 40  # messages kept after the system prompt


def conversations(turns: int = TURNS, window: int = WINDOW) -> list[list[dict[str, Any]]]:
    """The conversation as it stands at each turn (the lists share the message objects)."""
    system = {"role": "system", "content": "You answer from a window of the conversation."}
    history: list[dict[str, Any]] = []
    out = []
    for turn in range(turns):
        history += [
            {"role": "user", "content": f"question {turn}"},
            {"role": "assistant", "content": f"answer {turn}"},
        ]
        del history[: max(0, len(history) - window)]
        if turn == 12:  # a message in the window replaced by another
            history[5] = {"role": "assistant", "content": "answer, edited"}
        if turn == 20:  # the oldest three turns replaced by a summary of them
            history[:6] = [{"role": "user", "content": "(earlier: three turns, summarised)"}]
        if turn == 25:  # a note put in the middle
            history.insert(len(history) // 2, {"role": "user", "content": "(a note in the middle)"})
        out.append([system, *history])
    return out


def record(directory: Path, tier: str) -> Path:
    """Record :func:`conversations`, a snapshot a turn; returns the tier's session file."""
    clock = testing.StepClock()
    settings = Settings(directory=directory, flush_ms=0)
    with testing.deterministic(clock):
        environment = testing.fixed_environment(clock)
        session = oat.session("window", settings=settings, tier=tier, environment=environment)
        session.start()
        for turn, messages in enumerate(conversations()):
            oat.snapshot(f"turn {turn}", messages=messages, system_prompt=messages[0]["content"])
        path = session.files[0]
        session.stop()
    return path


if __name__ == "__main__":
    print(record(Path(sys.argv[1]), sys.argv[2]))
