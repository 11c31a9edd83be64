"""A small agent recorded with every source of variation fixed (ids, clocks, host, session id):
run twice, it must write the same bytes. ``python -m tests.golden.record_golden DIR``."""

from __future__ import annotations

import sys
from pathlib import Path

import otel_agent_trace as oat
from otel_agent_trace import testing
from otel_agent_trace.settings import Settings


@oat.tool
def read_file(path: str) -> str:
    """Read a (pretend) file."""
    return f"contents of {path}: def retry(): ..."


@oat.tool
def run_tests(target: str) -> dict:
    """Run the (pretend) tests."""
    return {"passed": 3, "failed": 0, "target": target}


def main(directory: Path, tier: str) -> None:
    clock = testing.StepClock()
    messages = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the retry loop in retry.py"},
    ]
    settings = Settings(directory=directory, flush_ms=0)
    with testing.deterministic(clock):
        session = oat.session(
            "golden", settings=settings, tier=tier, environment=testing.fixed_environment(clock)
        )
        session.start()
        with oat.agent("coder"):
            read_file("retry.py")
            messages.append({"role": "assistant", "content": "The loop never sleeps; adding backoff."})
            oat.record_message("assistant", messages[-1]["content"])
            run_tests("tests/test_retry.py")
            oat.snapshot("after the fix", messages=messages, system_prompt=messages[0]["content"])
        session.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "trace")
