"""An agent with a sizeable conversation (``argv[1]`` messages of ~8 KB, default 300) that then
calls a tool in a loop until it is stopped (or for ``argv[2]`` steps, then prints ``done`` and
exits), so a signal finds it with a few MB to write into the session ZIPs. Prints ``ready`` once
the conversation is recorded (nothing more until ``done``: a test need not read its output)."""

from __future__ import annotations

import random
import sys
import time

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    time.sleep(0.002)
    return step * step


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else None
    rng = random.Random(7)
    words = [f"w{rng.randrange(10**6):x}" for _ in range(5000)]
    with oat.agent("signalled"):
        for i in range(count):
            role = "user" if i % 2 == 0 else "assistant"
            oat.record_message(role, " ".join(rng.choices(words, k=1200)))
        print("ready", flush=True)
        step = 0
        while steps is None or step < steps:
            work(step)
            step += 1
    print("done", flush=True)


if __name__ == "__main__":
    main()
