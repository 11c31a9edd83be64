"""The Google Gen AI (``google-genai``) tests, in a virtualenv of their own: google-genai pins
``tenacity < 9.2``, and the main test environment pins a newer one. This one holds the 3.x line
(``tests/constraints-genai.txt``); the 2.x line that Google ADK installs is tested by the same
file in the ADK virtualenv (:mod:`tests.services.adk_venv`).

``python -m tests.services.genai install | run [pytest options] | pin`` (see
:mod:`tests.services.leg`): ``$AGENT_TRACE_GENAI_VENV``, default
``~/.cache/otel-agent-trace/genai-venv``.

``--version X`` (``install --version 2.30.0``, ``run --version 3.0.0 [pytest options]``): the same
at google-genai ``X``, one of the floors the claimed range names (:data:`FLOORS`), in a
virtualenv of its own beside the first (``…/genai-venv-X``), pinned by a constraints file of its
own (``tests/constraints-genai-2.30.txt``, ``-3.0.txt``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.services.leg import REPO, Leg

# aiohttp: google-genai's async client sends through it when it is installed (its transport is
# replayed too); without it, through httpx2 like the sync client
PACKAGES = ("google-genai", "aiohttp")
TESTS = ("tests/genai/test_google_genai.py", "tests/genai/test_snapshot_last_result.py")


def _leg(version: str | None = None) -> Leg:
    short = None if version is None else ".".join(version.split(".")[:2])
    return Leg(
        name="genai",
        env_var="AGENT_TRACE_GENAI_VENV",
        default_dir="~/.cache/otel-agent-trace/genai-venv",
        packages=PACKAGES if version is None else (f"google-genai=={version}", "aiohttp"),
        constraints=REPO / "tests" / (f"constraints-genai-{short}.txt" if short else "constraints-genai.txt"),
        tests=TESTS,
        runner=("pytest", "pytest-asyncio", "packaging"),
        suffix="" if version is None else f"-{version}",
        pytest_args=(),
        show=("google-genai",),
        option="" if version is None else f" --version {version}",
    )


GENAI = _leg()
FLOORS = {version: _leg(version) for version in ("2.30.0", "3.0.0")}


def venv_dir(version: str | None = None) -> Path:
    return (GENAI if version is None else FLOORS[version]).venv_dir()


def ensure_installed(version: str | None = None) -> Path:
    """The virtualenv's python, with this checkout and google-genai (``version``, one of
    :data:`FLOORS`; else the constraints file's) installed."""
    return (GENAI if version is None else FLOORS[version]).ensure_installed()


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
    if version is not None and version not in FLOORS:
        tested = ", ".join(FLOORS)
        raise SystemExit(f"--version {version}: the floors tested are {tested} (a constraints file each)")
    return version, rest


def main(argv: list[str]) -> int:
    version, rest = _version_option(argv)
    leg = GENAI if version is None else FLOORS[version]
    return leg.main(rest, "python -m tests.services.genai [--version X]")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
