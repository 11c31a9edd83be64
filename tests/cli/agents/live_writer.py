"""A session written live, for ``view --follow``: prints its file's path, records an agent span with
one tool call, then waits for the file named in argv[2] to exist before the second tool call and
the end of the session. Usage: ``python live_writer.py DIR GO_FILE``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import otel_agent_trace as oat


def main() -> None:
    directory, go = Path(sys.argv[1]), Path(sys.argv[2])
    with oat.session("live", directory=directory) as session:
        print(session.files[0], flush=True)
        with oat.agent("watcher"):
            with oat.tool("first", arguments={"step": 1}) as call:
                call.set_result("one")
            deadline = time.monotonic() + 120
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            with oat.tool("second", arguments={"step": 2}) as call:
                call.set_result("two")


if __name__ == "__main__":
    main()
