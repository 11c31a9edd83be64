"""An agent that calls a tool as fast as it can until it is stopped: most of its time is spent
inside the recorder, so a signal almost always arrives mid-write. Prints ``running`` once."""

from __future__ import annotations

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    return step * step


def main() -> None:
    with oat.agent("tight"):
        step = 0
        while True:
            work(step)
            step += 1
            if step == 200:
                print("running", flush=True)


if __name__ == "__main__":
    main()
