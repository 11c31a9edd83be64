"""A recording with what an export must carry: an agent span, a tool that fails (status ERROR and
an ``exception`` event), a tool that starts a child Python process joining the session (a child
file), a secret in a span name (the checkpoint tier keeps it; anything exported must not).

``python recorded_agent.py DIR [finish|crash]``: ``crash`` dies with ``os._exit`` inside the agent
span (a crash-cut session: the agent span unfinished, no ``session.end``).
"""

from __future__ import annotations

import os
import subprocess
import sys

import otel_agent_trace as oat

TOKEN = "ghp_" + "x7Kq2Lm9Pz4Rt8Vw1Ys5Ab3Cd6Ef0Gh2Ij4K"
CHILD = (
    "import otel_agent_trace as oat\nwith oat.session():\n    with oat.tool('child work'):\n        pass\n"
)


@oat.tool
def failing(n: int) -> int:
    raise ValueError(f"step {n} failed")


def main() -> None:
    directory, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "finish")
    session = oat.session("export-test", directory=directory, tier="both").start()
    with oat.agent("exporter-demo"):
        with oat.tool(f"fetch with {TOKEN}"):
            pass
        try:
            failing(3)
        except ValueError:
            pass
        with oat.tool("spawn") as call:
            env = {
                **os.environ,
                "AGENT_TRACE_DIR": directory,
                "AGENT_TRACE_SESSION_ID": str(session.session_id),
                "AGENT_TRACE_PARENT_SPAN": f"{call.span.get_span_context().span_id:016x}",
            }
            subprocess.run([sys.executable, "-c", CHILD], env=env, check=True, timeout=60)
        if mode == "crash":
            session.flush()
            os._exit(9)
    session.stop()
    print(session.session_id, flush=True)


if __name__ == "__main__":
    main()
