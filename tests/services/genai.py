"""The Google Gen AI (``google-genai``) tests, in a virtualenv of their own: google-genai pins
``tenacity < 9.2``, and the main test environment pins a newer one. This one holds the 3.x line
(``tests/constraints-genai.txt``); the 2.x line that Google ADK installs is tested by the same
file in the ADK virtualenv (:mod:`tests.services.adk_venv`).

``python -m tests.services.genai install`` makes ``$AGENT_TRACE_GENAI_VENV`` (default
``~/.cache/otel-agent-trace/genai-venv``) if it is missing and installs this checkout (editable),
google-genai and the test runner there, pinned by ``tests/constraints-genai.txt``, then
``pip check``. ``python -m tests.services.genai run`` does that and runs :data:`TESTS` there
(.ci/run).

``--version X`` (``install --version 2.30.0``, ``run --version 3.0.0 [pytest options]``): the same
at google-genai ``X`` (the floors the claimed range names), in a virtualenv of its own beside the
first (``…/genai-venv-X``), pinned by the same constraints file but for google-genai itself and
the pins ``X`` does not accept (read from its wheel's metadata; pip resolves those anew).

A virtualenv whose inputs (the packages, the constraints, this checkout's ``pyproject.toml``) are
those it was installed with is used as it is, with no pip run (a stamp file in it says which):
a second run costs the tests alone.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
ENV_VENV = "AGENT_TRACE_GENAI_VENV"
# aiohttp: google-genai's async client sends through it when it is installed (its transport is
# replayed too); without it, through httpx2 like the sync client
PACKAGES = ("google-genai", "aiohttp", "pytest", "pytest-asyncio", "packaging")
CONSTRAINTS = REPO / "tests" / "constraints-genai.txt"
TESTS = ("tests/genai/test_google_genai.py", "tests/genai/test_snapshot_last_result.py")
STAMP = ".agent-trace-installed"
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*([abrc.]+[0-9]+)?$")


def venv_dir(version: str | None = None) -> Path:
    base = Path(os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/genai-venv").expanduser()
    return base if version is None else base.with_name(f"{base.name}-{version}")


def _requirements(python: Path, version: str) -> list[Requirement]:
    """What google-genai ``version`` requires (its wheel's metadata, extras left out), fetched
    once into the virtualenv."""
    wheels = python.parent.parent / "google-genai-wheel"
    found = sorted(wheels.glob(f"google_genai-{version}-*.whl"))
    if not found:
        pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run(
            [*pip, "download", "--no-deps", "-d", str(wheels), f"google-genai=={version}"], check=True
        )
        found = sorted(wheels.glob(f"google_genai-{version}-*.whl"))
    with zipfile.ZipFile(found[0]) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(name).decode()
    requirements = [
        Requirement(line.partition(":")[2].strip())
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    return [r for r in requirements if r.marker is None or "extra" not in str(r.marker)]


def _inputs(python: Path, version: str | None) -> tuple[list[str], str]:
    """The packages to install and the constraints' text: the file's, or, at ``version``, the
    file's without its google-genai pin nor the pins that version does not accept (pip resolves
    those anew; ``websockets`` for 2.30: ``< 17``), and ``google-genai==version`` asked for."""
    text = CONSTRAINTS.read_text()
    if version is None:
        return list(PACKAGES), text
    accepted = {canonicalize_name(r.name): r.specifier for r in _requirements(python, version)}
    kept: list[str] = []
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if pin:
            name = canonicalize_name(pin.group(1))
            if name == "google-genai":
                continue
            if name in accepted and not accepted[name].contains(pin.group(2), prereleases=True):
                continue
        kept.append(line)
    packages = [f"google-genai=={version}" if p == "google-genai" else p for p in PACKAGES]
    return packages, "\n".join(kept) + "\n"


def _stamp(packages: list[str], constraints: str) -> str:
    digest = hashlib.sha256()
    for piece in (*packages, constraints, (REPO / "pyproject.toml").read_text(), str(REPO)):
        digest.update(piece.encode() + b"\0")
    return digest.hexdigest()


def ensure_installed(venv: Path | None = None, version: str | None = None) -> Path:
    """The virtualenv's python, with this checkout and google-genai (``version``, else the
    constraints file's) installed; no pip run when it was installed from the same inputs."""
    if version is not None and not _VERSION.match(version):
        raise SystemExit(f"not a google-genai version: {version!r}")
    venv = venv or venv_dir(version)
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be installing right now
        if not python.exists():
            shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted install
            base = getattr(sys, "_base_executable", None) or sys.executable
            subprocess.run([base, "-m", "venv", str(venv)], check=True)
        packages, constraints = _inputs(python, version)
        stamp = _stamp(packages, constraints)
        if (venv / STAMP).is_file() and (venv / STAMP).read_text() == stamp:
            return python
        (venv / STAMP).unlink(missing_ok=True)
        pinned = CONSTRAINTS
        if version is not None:
            pinned = venv / "constraints.txt"
            pinned.write_text(constraints)
        pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "install", "-c", str(pinned), "-e", str(REPO), *packages], check=True)
        subprocess.run([*pip, "check"], check=True)
        (venv / STAMP).write_text(stamp)
    return python


def _version_option(args: list[str]) -> tuple[str | None, list[str]]:
    """``--version X`` (or ``--version=X``) taken out of ``args``."""
    rest: list[str] = []
    version = None
    items = iter(args)
    for arg in items:
        if arg == "--version":
            version = next(items, None)
            if version is None:
                raise SystemExit("--version needs a google-genai version, e.g. --version 2.30.0")
        elif arg.startswith("--version="):
            version = arg.partition("=")[2]
        else:
            rest.append(arg)
    return version, rest


def run(args: list[str]) -> int:
    version, args = _version_option(args)
    python = ensure_installed(version=version)
    installed = subprocess.run(
        [str(python), "-c", "import google.genai; print(google.genai.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"google-genai {installed} ({python.parent.parent})", flush=True)
    if version is not None and installed != version:
        print(f"google-genai {installed} installed, not {version}", file=sys.stderr)
        return 1
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS, *args]
    return subprocess.run(command, cwd=REPO).returncode


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "install":
        version, rest = _version_option(argv[1:])
        if not rest:
            print(ensure_installed(version=version))
            return 0
    if command == "run":
        return run(argv[1:])
    print(
        "usage: python -m tests.services.genai install [--version X] | run [--version X] [pytest options]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
