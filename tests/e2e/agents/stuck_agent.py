"""An agent whose second tool call never returns (until the process is killed).

Prints ``stuck`` once the hanging tool has started, so a test knows what is in flight.
"""

from __future__ import annotations

import time

import otel_agent_trace as oat


@oat.tool
def quick() -> str:
    return "ok"


@oat.tool
def hang() -> None:
    print("stuck", flush=True)
    time.sleep(600)


def main() -> None:
    with oat.agent("stuck"):
        quick()
        hang()


if __name__ == "__main__":
    main()
