"""The tests of the agent frameworks that cannot share the main test environment, each set in a
virtualenv of its own (the main one pins openai 3.x and mcp 1.30):

* ``frameworks2``: LlamaIndex (``llama-index-llms-openai``) and AutoGen (``autogen-ext[openai]``),
  which need openai < 3 (``tests/constraints-frameworks2.txt``);
* ``crewai_venv``: CrewAI, which pins its own openai, mcp and pydantic
  (``tests/constraints-crewai.txt``);
* ``adk_venv``: Google ADK, which pins google-genai < 3 and its own OpenTelemetry
  (``tests/constraints-adk.txt``).

``python -m tests.services.frameworks2 install`` makes ``$AGENT_TRACE_FRAMEWORKS2_VENV`` (default
``~/.cache/otel-agent-trace/frameworks-openai2-venv``) if it is missing and installs this checkout
(editable), the frameworks and the test runner there, pinned by the constraints file, then
``pip check``. ``python -m tests.services.frameworks2 run`` does that and runs the leg's tests
there (.ci/run); the other legs alike.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = ("pytest", "pytest-asyncio", "hypothesis", "packaging")


@dataclass(frozen=True)
class Leg:
    """One virtualenv: where (an environment variable, else a default), what, and its tests."""

    env_var: str
    default_dir: str
    packages: tuple[str, ...]
    constraints: Path
    tests: tuple[str, ...]

    def venv_dir(self) -> Path:
        return Path(os.environ.get(self.env_var) or self.default_dir).expanduser()

    def ensure_installed(self) -> Path:
        """The virtualenv's python, with this checkout and the frameworks installed (pip is
        quick when they are)."""
        venv = self.venv_dir()
        python = venv / "bin" / "python"
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(venv.parent / f".{venv.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be installing right now
            if not python.exists():
                shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted install
                base = getattr(sys, "_base_executable", None) or sys.executable
                subprocess.run([base, "-m", "venv", str(venv)], check=True)
            pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
            packages = [*self.packages, *RUNNER]
            subprocess.run(
                [*pip, "install", "-c", str(self.constraints), "-e", str(REPO), *packages], check=True
            )
            subprocess.run([*pip, "check"], check=True)
        return python

    def run(self, args: list[str]) -> int:
        python = self.ensure_installed()
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
        return subprocess.run([*command, *self.tests, *args], cwd=REPO).returncode

    def main(self, argv: list[str], name: str) -> int:
        command = argv[0] if argv else ""
        if command == "install":
            print(self.ensure_installed())
            return 0
        if command == "run":
            return self.run(argv[1:])
        print(f"usage: python -m tests.services.{name} install | run [pytest options]", file=sys.stderr)
        return 2


FRAMEWORKS2 = Leg(
    env_var="AGENT_TRACE_FRAMEWORKS2_VENV",
    default_dir="~/.cache/otel-agent-trace/frameworks-openai2-venv",
    packages=("llama-index-core", "llama-index-llms-openai", "autogen-agentchat", "autogen-ext[openai]"),
    constraints=REPO / "tests" / "constraints-frameworks2.txt",
    tests=(
        "tests/frameworks/test_llamaindex.py",
        "tests/frameworks/test_autogen.py",
        "tests/model_replay/test_replay_agent_frameworks.py",  # (the frameworks not installed: skipped)
    ),
)


if __name__ == "__main__":
    sys.exit(FRAMEWORKS2.main(sys.argv[1:], "frameworks2"))
