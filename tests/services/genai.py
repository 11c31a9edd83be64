"""The Google Gen AI (``google-genai``) tests, in a virtualenv of their own: google-genai pins
``tenacity < 9.2``, and the main test environment pins a newer one. This one holds the 3.x line
(``tests/constraints-genai.txt``); the 2.x line that Google ADK installs is tested by the same
file in the ADK virtualenv (:mod:`tests.services.adk_venv`).

``python -m tests.services.genai install`` makes ``$AGENT_TRACE_GENAI_VENV`` (default
``~/.cache/otel-agent-trace/genai-venv``) if it is missing and installs this checkout (editable),
google-genai and the test runner there, pinned by ``tests/constraints-genai.txt``, then
``pip check``. ``python -m tests.services.genai run`` does that and runs :data:`TESTS` there
(.ci/run).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VENV = "AGENT_TRACE_GENAI_VENV"
# aiohttp: google-genai's async client sends through it when it is installed (its transport is
# replayed too); without it, through httpx2 like the sync client
PACKAGES = ("google-genai", "aiohttp", "pytest", "pytest-asyncio", "packaging")
CONSTRAINTS = REPO / "tests" / "constraints-genai.txt"
TESTS = ("tests/genai/test_google_genai.py",)


def venv_dir() -> Path:
    return Path(os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/genai-venv").expanduser()


def ensure_installed(venv: Path | None = None) -> Path:
    """The virtualenv's python, with this checkout and google-genai installed (quick when they are)."""
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
    print("usage: python -m tests.services.genai install | run [pytest options]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
