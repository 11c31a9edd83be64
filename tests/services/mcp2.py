"""The MCP tests on mcp 2.x, in a virtualenv of their own (the main one has mcp 1.x, which the
rest of the test dependencies pin).

``python -m tests.services.mcp2 install`` makes ``$AGENT_TRACE_MCP2_VENV`` (default
``~/.cache/otel-agent-trace/mcp2-venv``) if it is missing and installs this checkout (editable),
mcp 2.3 and the test runner there, pinned by ``tests/constraints-mcp2.txt``, then ``pip check``.
``python -m tests.services.mcp2 run`` does that and runs :data:`TESTS` there (.ci/run).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VENV = "AGENT_TRACE_MCP2_VENV"
MCP_VERSION = "2.3.0"
PACKAGES = (f"mcp=={MCP_VERSION}", "pytest", "pytest-asyncio", "openai", "packaging")
CONSTRAINTS = REPO / "tests" / "constraints-mcp2.txt"
# every MCP test that needs no other framework: client, server, zero-code, model replay
TESTS = (
    "tests/tools/test_mcp.py",
    "tests/tools/test_mcp_zero_code.py",
    "tests/tools/test_session_recorder.py::test_mcp_server_in_memory",
    "tests/tools/test_session_recorder.py::test_cli_mcp_stdio_server",
    "tests/model_replay/test_framework_tools.py::test_tools_recorded_answers_a_bare_mcp_call_tool_and_never_calls_the_server",
    "tests/model_replay/test_framework_tools.py::test_with_tools_live_the_mcp_server_runs_the_tool_without_its_file",
)


def venv_dir() -> Path:
    return Path(os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/mcp2-venv").expanduser()


def ensure_installed(venv: Path | None = None) -> Path:
    """The virtualenv's python, with this checkout and mcp 2.x installed (pip is quick when they are)."""
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
        subprocess.run([*pip, "install", "-c", str(CONSTRAINTS), "-e", str(REPO), *PACKAGES], check=True)
        subprocess.run([*pip, "check"], check=True)
    return python


def run(args: list[str]) -> int:
    python = ensure_installed()
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS, *args]
    return subprocess.run(command, cwd=REPO).returncode


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "install":
        print(ensure_installed())
        return 0
    if command == "run":
        return run(argv[1:])
    print("usage: python -m tests.services.mcp2 install | run [pytest options]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
