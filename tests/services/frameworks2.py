"""The tests of the agent frameworks whose OpenAI client must be openai < 3 (LlamaIndex's
``llama-index-llms-openai``, AutoGen's ``autogen-ext[openai]``), in a virtualenv of their own: the
main one pins openai 3.x.

``python -m tests.services.frameworks2 install`` makes ``$AGENT_TRACE_FRAMEWORKS2_VENV`` (default
``~/.cache/otel-agent-trace/frameworks-openai2-venv``) if it is missing and installs this checkout
(editable), the frameworks and the test runner there, pinned by
``tests/constraints-frameworks2.txt``, then ``pip check``. ``python -m tests.services.frameworks2
run`` does that and runs :data:`TESTS` there (.ci/run).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VENV = "AGENT_TRACE_FRAMEWORKS2_VENV"
PACKAGES = (
    "llama-index-core",
    "llama-index-llms-openai",
    "autogen-agentchat",
    "autogen-ext[openai]",
    "pytest",
    "pytest-asyncio",
    "hypothesis",
    "packaging",
)
CONSTRAINTS = REPO / "tests" / "constraints-frameworks2.txt"
TESTS = (
    "tests/frameworks/test_llamaindex.py",
    "tests/frameworks/test_autogen.py",
    "tests/model_replay/test_replay_agent_frameworks.py",  # (the frameworks not installed: skipped)
)


def venv_dir() -> Path:
    return Path(os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/frameworks-openai2-venv").expanduser()


def ensure_installed(venv: Path | None = None) -> Path:
    """The virtualenv's python, with this checkout and the frameworks installed (pip is quick when
    they are)."""
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
    command = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
    ]
    return subprocess.run([*command, *TESTS, *args], cwd=REPO).returncode


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "install":
        print(ensure_installed())
        return 0
    if command == "run":
        return run(argv[1:])
    print("usage: python -m tests.services.frameworks2 install | run [pytest options]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
