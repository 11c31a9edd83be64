"""Installing the package into an existing framework environment changes nothing that is there.

A fresh virtualenv gets Strands Agents 1.62's pinned set (the versions pip chose for
``strands-agents==1.62.0``, kept in ``strands-1.62.0.txt`` beside this file), from a wheelhouse
under ``~/.cache/otel-agent-trace/`` (made from the package registry when it is missing: the
cache speeds the test up, it is never needed). Then ``pip install --dry-run --report`` of this
repository, as the README says to install it beside a framework (the OTLP exporter pinned to the
installed SDK), must install nothing that is already installed, and the real install must leave
``pip check`` clean and every version as it was. A plain install does not (strict xfail: pip
takes the newest exporter, whose SDK pin upgrades what the framework pinned).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The source installed: this repository (INSTALL_TEST_SOURCE: another tree, to try a change).
REPO = Path(os.environ.get("INSTALL_TEST_SOURCE") or Path(__file__).resolve().parents[2])
HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "otel-agent-trace"
PIP_ENV = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CACHE_DIR": str(CACHE / "pip-cache")}

FRAMEWORKS = {
    # name: (pinned set beside this file, what the pinned set is of)
    "strands-1.62.0": "strands-agents==1.62.0",
}


def _run(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(PIP_ENV)
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check and result.returncode != 0:
        command = " ".join(args)
        raise AssertionError(f"{command} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def _wheelhouse(name: str, pins: Path) -> Path:
    """The pinned set's wheels (downloaded when missing; a failed download skips the test)."""
    house = CACHE / "install-wheels" / name
    marker = house / ".complete"
    if marker.exists() and marker.read_text() == pins.read_text():
        return house
    house.mkdir(parents=True, exist_ok=True)
    pip = (sys.executable, "-m", "pip")
    got = _run(*pip, "download", "-q", "--no-deps", "-d", str(house), "-r", str(pins), check=False)
    if got.returncode != 0:
        pytest.skip(f"the pinned set of {name} could not be downloaded: {got.stderr[-500:]}")
    marker.write_text(pins.read_text())
    return house


def _installed(python: Path) -> dict[str, str]:
    listed = _run(str(python), "-m", "pip", "list", "--format", "json")
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)}


@pytest.fixture(scope="module", params=sorted(FRAMEWORKS))
def framework_env(request, tmp_path_factory):
    """A virtualenv holding the framework's pinned set, and what is installed in it."""
    name = request.param
    pins = HERE / f"{name}.txt"
    house = _wheelhouse(name, pins)
    venv = tmp_path_factory.mktemp(name) / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    _run(str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(house), "-r", str(pins))
    _run(str(python), "-m", "pip", "check")
    return name, python, _installed(python)


def _planned_changes(
    python: Path, before: dict[str, str], tmp_path: Path, *requirements: str
) -> dict[str, str]:
    """What ``pip install REQUIREMENTS`` would change among the installed packages (a dry run)."""
    report = tmp_path / "report.json"
    _run(str(python), "-m", "pip", "install", "-q", "--dry-run", "--report", str(report), *requirements)
    planned = {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    return {k: f"{before[k]} -> {v}" for k, v in planned.items() if k in before}


@pytest.mark.xfail(
    strict=True,
    reason="pyproject.toml depends on opentelemetry-exporter-otlp (a core dependency): pip takes its "
    "newest release (1.45.2), whose opentelemetry-sdk~=1.45.2 pin upgrades opentelemetry-api/sdk/"
    "semantic-conventions/instrumentation (0.66b1 -> 0.66b2) and breaks Strands' "
    "opentelemetry-instrumentation-threading 0.66b1. pip never picks an older exporter to avoid an "
    "upgrade; the README's install beside a framework pins the exporter to the installed SDK.",
)
def test_a_plain_install_beside_a_framework_changes_nothing_installed(framework_env, tmp_path):
    name, python, before = framework_env
    changed = _planned_changes(python, before, tmp_path, str(REPO))
    assert not changed, f"installing into {name} would change installed packages: {changed}"


def test_the_readmes_install_beside_a_framework_changes_nothing_installed(framework_env, tmp_path):
    """README, "Installing beside a framework": the OTLP exporter of the SDK version installed."""
    name, python, before = framework_env
    exporter = f"opentelemetry-exporter-otlp=={before['opentelemetry-sdk']}"
    changed = _planned_changes(python, before, tmp_path, str(REPO), exporter)
    assert not changed, f"installing into {name} would change installed packages: {changed}"

    _run(str(python), "-m", "pip", "install", "-q", str(REPO), exporter)
    check = _run(str(python), "-m", "pip", "check", check=False)
    assert check.returncode == 0, f"pip check after installing into {name}:\n{check.stdout}"
    after = _installed(python)
    assert {k: v for k, v in after.items() if k in before} == before
    assert "otel-agent-trace" in after
