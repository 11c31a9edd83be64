"""An agent whose session grows past the size from which its ZIP is copied while it runs.

Writes tool calls with long arguments until its session file is past ``argv[1]`` MB, prints
``big``, then goes on slowly (a tool call every 10 ms) until it is killed.
"""

from __future__ import annotations

import glob
import os
import sys
import time

import otel_agent_trace as oat


@oat.tool
def work(step: int, text: str) -> int:
    return len(text) + step


def main() -> None:
    target = float(sys.argv[1]) * (1 << 20)
    path = None
    with oat.agent("big"):
        step = 0
        while True:
            step += 1
            work(step, f"{step} " + "lorem ipsum dolor sit amet " * 700)
            if path is None:  # the session started with the first span
                directory = os.environ.get("AGENT_TRACE_DIR", "agent-sessions")
                (path,) = glob.glob(os.path.join(directory, "session-*.jsonl"))
            if os.path.getsize(path) > target:
                break
        print("big", flush=True)
        while True:
            step += 1
            work(step, f"{step} slowly")
            time.sleep(0.01)


if __name__ == "__main__":
    main()
