"""An agent whose standard error is a full pipe nobody reads (a supervisor whose log reader is
stuck): anything written to it blocks for ever. Records a tool call in a loop until signalled;
prints ``ready`` (on stdout) once recording."""

from __future__ import annotations

import fcntl
import os
import time

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    time.sleep(0.002)
    return step * step


def _stderr_to_a_full_pipe() -> None:
    read_end, write_end = os.pipe()  # the read end stays open and unread
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        while True:
            os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags)
    os.dup2(write_end, 2)


def main() -> None:
    with oat.agent("stderr-blocked"):
        for step in range(20):
            work(step)
        _stderr_to_a_full_pipe()
        print("ready", flush=True)
        step = 0
        while True:
            work(step)
            step += 1


if __name__ == "__main__":
    main()
