"""The README's install beside a framework changes nothing that is installed, beside four frameworks.

Each framework's pinned set lies beside this file (the versions pip chose for the framework
alone): Strands Agents, LangGraph with langchain-openai, the OpenAI Agents SDK (which installs
opentelemetry-api and no SDK) and DevDuck (mcp 2.x and its own OpenTelemetry pins). A fresh
virtualenv gets the set from a wheelhouse under ``~/.cache/otel-agent-trace/`` (built from the
package registry when it is missing: the cache speeds the test up, it is never needed). Then the
README's command, with this repository in place of the package name, must plan no change to an
installed package (``--dry-run --report``), install, leave ``pip check`` clean and every version as
it was, and ``opentelemetry-instrument python -c ...`` must record a session beside the framework.

Where no install can keep every installed version (here an opentelemetry-api older than the
floor in pyproject.toml), the command must fail and change nothing.

A plain ``pip install otel-agent-trace`` is not checked: it leaves Strands' or DevDuck's set as
it is only while the newest opentelemetry-exporter-otlp pins the SDK they pinned (pip takes the
newest exporter and upgrades the SDK to its pin; 1.45.2's moved OpenTelemetry 1.45.1/0.66b1 to
1.45.2/0.66b2 and broke opentelemetry-instrumentation-threading 0.66b1).

These tests reach the package registry and take minutes: they are marked ``install`` and run only
when asked for (``python -m pytest -m install tests/install``, see conftest.py), as .ci/run does.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

# The source installed: this repository (INSTALL_TEST_SOURCE: another tree, to try a change).
REPO = Path(os.environ.get("INSTALL_TEST_SOURCE") or Path(__file__).resolve().parents[2])
HERE = Path(__file__).resolve().parent
README = Path(__file__).resolve().parents[2] / "README.md"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "otel-agent-trace"
PIP_ENV = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CACHE_DIR": str(CACHE / "pip-cache")}

# The README's command, and its form for PowerShell (or a shell without process substitution).
COMMAND = "python -m pip install otel-agent-trace -c <(python -m pip list --format=freeze)"
POWERSHELL = (
    "python -m pip list --format=freeze > installed.txt; "
    "python -m pip install otel-agent-trace -c installed.txt"
)

FRAMEWORKS = {
    # pinned set beside this file: (what it is the set of, a module the smoke check imports)
    "strands-1.62.0": ("strands-agents==1.62.0", "strands"),
    "langgraph-1.2.24": ("langgraph==1.2.24 langchain-openai==1.8.1", "langgraph.graph"),
    "openai-agents-0.24.0": ("openai-agents==0.24.0", "agents"),
    # (importing devduck starts its agent: the smoke check imports the Strands it runs on)
    "devduck-1.15.7": ("devduck==1.15.7", "strands"),
}

# Recorded in the framework's virtualenv by ``opentelemetry-instrument python -c SMOKE``.
SMOKE = """
import {module}
import otel_agent_trace as oat

@oat.tool
def lookup(key: str) -> str:
    return key.upper()

assert lookup("beside") == "BESIDE"
"""
LOADED = """
import sys
import otel_agent_trace as oat

session = oat.load_session(sys.argv[1])
assert session.complete and not session.issues, session
assert [s.name for s in session.spans if s.layer == "tool"] == ["execute_tool lookup"], session
"""


def _run(
    *args: str, cwd: Path | None = None, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    prefixes = ("PIP_", "VIRTUAL_ENV", "PYTHONPATH", "OTEL_", "AGENT_TRACE_")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    clean.update(PIP_ENV, **(env or {}))
    result = subprocess.run(args, cwd=cwd, env=clean, capture_output=True, text=True, timeout=900)
    if check and result.returncode != 0:
        command = " ".join(args)
        raise AssertionError(f"{command} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def _wheelhouse(name: str, pins: Path) -> Path:
    """The pinned set's wheels (built when missing; a failed download skips the test)."""
    house = CACHE / "install-wheels" / name
    marker = house / ".complete"
    if marker.exists() and marker.read_text() == pins.read_text():
        return house
    house.mkdir(parents=True, exist_ok=True)
    pip = (sys.executable, "-m", "pip")
    # (pip wheel, not pip download: a set may hold an sdist, built here once, e.g. DevDuck's halo)
    got = _run(*pip, "wheel", "-q", "--no-deps", "-w", str(house), "-r", str(pins), check=False)
    if got.returncode != 0:
        pytest.skip(f"the pinned set of {name} could not be downloaded: {got.stderr[-500:]}")
    marker.write_text(pins.read_text())
    return house


def _venv(where: Path) -> Path:
    _run(sys.executable, "-m", "venv", str(where))
    return where / "bin" / "python"


def _installed(python: Path) -> dict[str, str]:
    listed = _run(str(python), "-m", "pip", "list", "--format", "json")
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)}


def _in_venv(python: Path, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in bash with the virtualenv active (its ``python`` first on PATH)."""
    venv = python.parent.parent
    path = f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return _run("bash", "-c", command, cwd=cwd, check=False, env={"PATH": path, "VIRTUAL_ENV": str(venv)})


def _readmes(command: str, *options: str) -> str:
    """The README's ``command`` installing this repository (with pip ``options``)."""
    assert command in README.read_text(), f"the README no longer says: {command}"
    installing = " ".join(("python -m pip install", *map(shlex.quote, options), shlex.quote(str(REPO))))
    return command.replace("python -m pip install otel-agent-trace", installing)


def _planned(report: Path) -> dict[str, str]:
    return {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }


@pytest.fixture(scope="module", params=sorted(FRAMEWORKS))
def framework_env(request, tmp_path_factory):
    """A virtualenv holding the framework's pinned set, and what is installed in it."""
    name = request.param
    pins = HERE / f"{name}.txt"
    house = _wheelhouse(name, pins)
    python = _venv(tmp_path_factory.mktemp(name) / "venv")
    _run(str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(house), "-r", str(pins))
    _run(str(python), "-m", "pip", "check")
    return name, python, _installed(python)


def test_the_readmes_install_beside_a_framework_changes_nothing_installed(framework_env, tmp_path):
    name, python, before = framework_env
    plan = tmp_path / "plan.json"
    planning = _in_venv(python, _readmes(COMMAND, "-q", "--dry-run", "--report", str(plan)), tmp_path)
    assert planning.returncode == 0, f"the README's install into {name}:\n{planning.stderr}"
    planned = _planned(plan)
    changed = {k: f"{before[k]} -> {v}" for k, v in planned.items() if k in before}
    assert not changed, f"installing into {name} would change installed packages: {changed}"
    assert "otel-agent-trace" in planned

    # The PowerShell form, its list as Windows PowerShell 5.1's `>` writes it (UTF-16, a BOM).
    freeze = _run(str(python), "-m", "pip", "list", "--format=freeze").stdout
    (tmp_path / "installed.txt").write_text(freeze, encoding="utf-16")
    plan_ps = tmp_path / "plan-powershell.json"
    installing = _readmes(POWERSHELL, "-q", "--dry-run", "--report", str(plan_ps)).partition("; ")[2]
    planning = _in_venv(python, installing, tmp_path)
    assert planning.returncode == 0, f"the PowerShell form's install into {name}:\n{planning.stderr}"
    assert _planned(plan_ps) == planned

    installing = _in_venv(python, _readmes(COMMAND, "-q"), tmp_path)
    assert installing.returncode == 0, f"the README's install into {name}:\n{installing.stderr}"
    check = _run(str(python), "-m", "pip", "check", check=False)
    assert check.returncode == 0, f"pip check after installing into {name}:\n{check.stdout}"
    after = _installed(python)
    assert {k: v for k, v in after.items() if k in before} == before
    assert after["otel-agent-trace"]

    # A smoke check: the installed package records a session beside the framework.
    instrument = str(python.parent / "opentelemetry-instrument")
    smoke = SMOKE.format(module=FRAMEWORKS[name][1])
    env = {"AGENT_TRACE_INTERNAL_ERRORS": "raise"}
    run = _run(instrument, str(python), "-c", smoke, cwd=tmp_path, check=False, env=env)
    assert run.returncode == 0, f"opentelemetry-instrument python -c ... beside {name}:\n{run.stderr}"
    sessions = sorted((tmp_path / "agent-sessions").glob("session-*.jsonl"))
    assert len(sessions) == 1, f"no session recorded beside {name}:\n{run.stderr}"
    _run(str(python), "-c", LOADED, str(sessions[0]))
    # ... and its HTML page, whose style and script are package data (page.css, page.js)
    page = tmp_path / "page.html"
    _run(str(python.parent / "otel-agent-trace"), "view", str(sessions[0]), "--html", str(page))
    html = page.read_text()
    assert "--agent: #4c78d8" in html, f"the page beside {name} lacks its style"
    assert '"use strict";' in html, f"the page beside {name} lacks its script"


def test_an_environment_pip_cannot_keep_is_left_as_it_is(tmp_path):
    """An installed opentelemetry-api older than the floor: the command fails, changing nothing."""
    python = _venv(tmp_path / "venv")
    got = _run(str(python), "-m", "pip", "install", "-q", "opentelemetry-api==1.39.1", check=False)
    if got.returncode != 0:
        pytest.skip(f"opentelemetry-api 1.39.1 could not be installed: {got.stderr[-500:]}")
    before = _installed(python)

    installing = _in_venv(python, _readmes(COMMAND, "-q"), tmp_path)
    assert installing.returncode != 0, f"the README's install moved opentelemetry-api:\n{installing.stdout}"
    assert "opentelemetry-api" in installing.stderr
    assert _installed(python) == before
