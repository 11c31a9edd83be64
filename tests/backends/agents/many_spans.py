"""An agent of ``argv[1]`` tool calls (default 5000) as fast as it can; prints ``done`` at the end
of its work, so a test can time what exit costs after it."""

from __future__ import annotations

import sys

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    return step


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with oat.agent("many"):
        for step in range(steps):
            work(step)
    print("done", flush=True)


if __name__ == "__main__":
    main()
