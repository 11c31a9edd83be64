"""An agent whose session ZIP cannot be written: before it exits, a file of ours (``blocker``)
takes the ZIP's name, which the export must neither replace nor leave a temporary file beside."""

from __future__ import annotations

from pathlib import Path

import otel_agent_trace as oat


@oat.tool
def work(step: int) -> int:
    return step * step


def main() -> None:
    with oat.agent("blocked"):
        for step in range(20):
            work(step)
            oat.record_message("assistant", f"did step {step}")
    directory = Path("agent-sessions")
    (jsonl,) = [p for p in directory.glob("session-*.jsonl") if p.name.count(".") == 1]
    (directory / (jsonl.name[: -len(".jsonl")] + ".zip")).write_bytes(b"blocker")
    print("done", flush=True)


if __name__ == "__main__":
    main()
