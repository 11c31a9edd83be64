"""An agent that loops over tool calls until it is killed (or for ``argv[1]`` steps).

Prints ``step N`` after each finished tool call, so a test knows what must be on disk.
"""

from __future__ import annotations

import sys
import time

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    time.sleep(0.002)
    return step * step


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10**9
    with oat.agent("looper"):
        for step in range(steps):
            work(step)
            oat.record_message("assistant", f"did step {step}")
            print(f"step {step}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()
