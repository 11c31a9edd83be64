"""An agent whose tools run in forked processes: a multiprocessing pool (fork start method) and a
plain ``os.fork()`` child that returns normally. Prints the results."""

from __future__ import annotations

import multiprocessing
import os
import sys

import otel_agent_trace as oat


@oat.tool
def square(x: int) -> int:
    return x * x


def work(x: int) -> int:
    return square(x)


def main() -> None:
    with oat.agent("forker"):
        square(1)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map(work, [2, 3, 4])
        pid = os.fork()
        if pid == 0:  # the child records one tool call, then exits normally (atexit runs)
            square(6)
            sys.exit(0)
        os.waitpid(pid, 0)
        results.append(square(5))
    print(results)


if __name__ == "__main__":
    main()
