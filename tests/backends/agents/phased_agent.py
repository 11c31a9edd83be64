"""An agent in two phases of ``argv[1]`` tool calls each (``phase1 N`` / ``phase2 N``): after the
first it prints ``waiting`` and reads a line from standard input before going on, so a test can
change the backend in between. Prints ``done`` at the end."""

from __future__ import annotations

import sys

import otel_agent_trace as oat


@oat.tool
def phase1(step: int) -> int:
    return step


@oat.tool
def phase2(step: int) -> int:
    return step


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with oat.agent("phased"):
        for step in range(steps):
            phase1(step)
        print("waiting", flush=True)
        sys.stdin.readline()
        for step in range(steps):
            phase2(step)
    print("done", flush=True)


if __name__ == "__main__":
    main()
