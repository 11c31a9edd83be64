"""DevDuck session ZIPs written by DevDuck itself: devduck 1.15.7's own ``SessionRecorder``, in a
virtualenv of its own (devduck pins a Strands of its own; importing it starts nothing when its
servers are switched off, as here).

``python -m tests.services.devduck install`` makes ``$AGENT_TRACE_DEVDUCK_VENV`` (default
``~/.cache/otel-agent-trace/devduck-venv``) if it is missing and installs devduck there, pinned by
``tests/constraints-devduck.txt``. :func:`record` runs a recording there: DevDuck's recorder with its
hooks on (``builtins.open`` is recorded), ``opens`` files opened, ``snapshots`` snapshots, then
stop and DevDuck's own export.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VENV = "AGENT_TRACE_DEVDUCK_VENV"
DEVDUCK = "devduck==1.15.7"
CONSTRAINTS = REPO / "tests" / "constraints-devduck.txt"
# every server and listener DevDuck would start on import, off
QUIET = {
    "DEVDUCK_AUTO_START_SERVERS": "false",
    "DEVDUCK_ENABLE_ZENOH": "false",
    "DEVDUCK_ENABLE_WS": "false",
    "DEVDUCK_ENABLE_TCP": "false",
    "DEVDUCK_ENABLE_MCP": "false",
    "DEVDUCK_ENABLE_IPC": "false",
    "DEVDUCK_ENABLE_ZCM": "false",
    "DEVDUCK_AMBIENT_MODE": "false",
}

# DevDuck's recorder, driven as DevDuck drives it (start, the agent's work, snapshot, stop, export)
_RECORD = """
import json, sys
import devduck

spec = json.loads(sys.argv[1])
recorder = devduck.SessionRecorder(spec["session_id"])
recorder.start(install_hooks=True)
for n in range(spec["opens"]):
    with open(spec["read"]) as handle:
        handle.read(1)
for n in range(spec["snapshots"]):
    recorder.record_agent_message("user", "question %d" % n)
    recorder.snapshot(description="turn %d" % n, last_query="question %d" % n)
recorder.stop()
print(recorder.export(spec["out"]))
"""


def venv_dir() -> Path:
    return Path(os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/devduck-venv").expanduser()


def ensure_installed(venv: Path | None = None) -> Path:
    """The virtualenv's python, with devduck installed (pip is quick when it is)."""
    venv = venv or venv_dir()
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be installing right now
        if not python.exists():
            shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted install
            base = getattr(sys, "_base_executable", None) or sys.executable
            subprocess.run([base, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "install", "-c", str(CONSTRAINTS), DEVDUCK], check=True)
    return python


def record(
    out: Path, *, session_id: str, opens: int = 0, snapshots: int = 0, python: Path | None = None
) -> Path:
    """A session ZIP at ``out`` written by devduck's own recorder and export."""
    python = python or ensure_installed()
    read = out.parent / "read-me.txt"
    read.write_text("duck")
    spec = {
        "session_id": session_id,
        "opens": opens,
        "snapshots": snapshots,
        "read": str(read),
        "out": str(out),
    }
    env = {**os.environ, **QUIET, "HOME": str(out.parent)}
    done = subprocess.run(
        [str(python), "-c", _RECORD, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=out.parent,
        env=env,
    )
    if done.returncode != 0 or not out.is_file():
        raise RuntimeError(f"devduck's recorder failed ({done.returncode}): {done.stderr[-2000:]}")
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        print(ensure_installed())
        return 0
    print("usage: python -m tests.services.devduck install", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
