"""A virtualenv of its own for tests that cannot share the main test environment (a framework that
pins its own openai, mcp, google-genai or httpx; a dependency at the floor a range claims): one
:class:`Leg` each, used by ``tests.services.{frameworks2,adk_venv,crewai_venv,genai,mcp2,floors}``.

``python -m tests.services.<name> install`` makes the leg's virtualenv (``$<ENV_VAR>``, else a
directory under ``~/.cache/otel-agent-trace``) if it is missing or its python no longer runs, and
installs this checkout (editable), the leg's packages and the test runner there, every one pinned
by the leg's constraints file (each pins everything it installs: nothing is resolved anew), then
``pip check``. ``python -m tests.services.<name> run [pytest options]`` does that and runs the
leg's tests there (.ci/run). ``python -m tests.services.<name> pin`` resolves the leg's packages
once with pip, unconstrained, and writes what it resolved as the constraints file.

A virtualenv installed from the same inputs (the packages, the constraints file's text, this
checkout's ``pyproject.toml`` and place) is used as it is, with no pip install (a stamp file in it
says which): a second run costs ``pip check`` and the tests.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = ("pytest", "pytest-asyncio", "hypothesis", "packaging")
STAMP = ".agent-trace-installed"
QUIET_PIP = ("-m", "pip", "--disable-pip-version-check", "-q")


@dataclass(frozen=True)
class Leg:
    """One virtualenv: where (an environment variable, else a default; ``suffix`` appended to the
    directory's name), what (``packages`` and ``runner``, pinned by ``constraints``), and its tests
    (``pytest_args`` before them; ``show``: the distributions whose installed versions a run prints;
    ``option``: what selects this leg on the command line, when its module has several)."""

    name: str
    env_var: str
    default_dir: str
    packages: tuple[str, ...]
    constraints: Path
    tests: tuple[str, ...]
    runner: tuple[str, ...] = RUNNER
    suffix: str = ""
    pytest_args: tuple[str, ...] = ("-W", "ignore::DeprecationWarning")
    show: tuple[str, ...] = ()
    option: str = ""

    def venv_dir(self) -> Path:
        base = Path(os.environ.get(self.env_var) or self.default_dir).expanduser()
        return base.with_name(base.name + self.suffix) if self.suffix else base

    def requirements(self) -> list[str]:
        return ["-e", str(REPO), *self.packages, *self.runner]

    def stamp(self) -> str:
        digest = hashlib.sha256()
        pieces = (*self.requirements(), self.constraints.read_text(), (REPO / "pyproject.toml").read_text())
        for piece in pieces:
            digest.update(piece.encode() + b"\0")
        return digest.hexdigest()

    @contextmanager
    def _venv(self) -> Iterator[Path]:
        """The virtualenv's python (the virtualenv made anew if its python does not run), with
        the virtualenv locked: another run may be installing there right now."""
        venv = self.venv_dir()
        python = venv / "bin" / "python"
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(venv.parent / f".{venv.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            runs = python.exists() and subprocess.run([str(python), "-c", "import sys"]).returncode == 0
            if not runs:
                shutil.rmtree(venv, ignore_errors=True)  # half made, or its base python is gone
                base = getattr(sys, "_base_executable", None) or sys.executable
                subprocess.run([base, "-m", "venv", str(venv)], check=True)
            yield python

    def ensure_installed(self) -> Path:
        """The virtualenv's python, with this checkout and the leg's packages installed as the
        constraints file pins them (no pip install when the stamp says they are), ``pip check``
        clean."""
        stamp = self.stamp()
        with self._venv() as python:
            done = python.parent.parent / STAMP
            if not (done.is_file() and done.read_text() == stamp):
                done.unlink(missing_ok=True)
                command = [str(python), *QUIET_PIP, "install", "-c", str(self.constraints)]
                subprocess.run([*command, *self.requirements()], check=True)
                subprocess.run([str(python), *QUIET_PIP, "check"], check=True)
                done.write_text(stamp)
            else:
                subprocess.run([str(python), *QUIET_PIP, "check"], check=True)
        return python

    def pin(self) -> Path:
        """Resolve the leg's packages once with pip (no constraints) and write every one it
        resolved, pinned, as the constraints file."""
        with self._venv() as python:
            command = [str(python), *QUIET_PIP, "install", "--dry-run", "--ignore-installed"]
            report = subprocess.run(
                [*command, "--report", "-", *self.requirements()], check=True, capture_output=True, text=True
            ).stdout
        installs = json.loads(report)["install"]
        pins = sorted(
            (
                f"{item['metadata']['name']}=={item['metadata']['version']}"
                for item in installs
                if not item["download_info"].get("dir_info", {}).get("editable")  # (this checkout)
            ),
            key=str.lower,
        )
        asked = " ".join(f"'{p}'" if set(p) & set("[]<>!;") else p for p in self.packages)
        header = (
            f"# The {self.name} leg of .ci/run (python -m tests.services.{self.name}{self.option}):\n"
            f"# what pip resolved for pip install -e . {asked} {' '.join(self.runner)},\n"
            f"# in a virtualenv of its own, every one pinned (python -m tests.services.{self.name} pin"
            f"{self.option} writes it anew).\n"
        )
        self.constraints.write_text(header + "".join(f"{p}\n" for p in pins))
        return self.constraints

    def versions(self, python: Path) -> str:
        """``name version`` of each of :attr:`show`, as installed."""
        script = "import sys, importlib.metadata as m; print(*(n + ' ' + m.version(n) for n in sys.argv[1:]))"
        return subprocess.run(
            [str(python), "-c", script, *self.show], check=True, capture_output=True, text=True
        ).stdout.strip()

    def run(self, args: Sequence[str]) -> int:
        python = self.ensure_installed()
        if self.show:
            print(f"{self.versions(python)} ({python.parent.parent})", flush=True)
        command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *self.pytest_args]
        return subprocess.run([*command, *self.tests, *args], cwd=REPO).returncode

    def main(self, argv: Sequence[str], usage: str = "") -> int:
        return main([self], argv, usage or f"python -m tests.services.{self.name}")


def main(legs: Sequence[Leg], argv: Sequence[str], usage: str) -> int:
    """``install``, ``run [pytest options]`` or ``pin``, for each of ``legs`` in turn (a run: each
    leg's tests, whether or not the one before passed; the exit status the worst)."""
    command, args = (argv[0], list(argv[1:])) if argv else ("", [])
    if command == "install" and not args:
        for leg in legs:
            print(leg.ensure_installed(), flush=True)
        return 0
    if command == "pin" and not args:
        for leg in legs:
            print(leg.pin(), flush=True)
        return 0
    if command == "run":
        return max(leg.run(args) for leg in legs)
    print(f"usage: {usage} install | run [pytest options] | pin", file=sys.stderr)
    return 2
