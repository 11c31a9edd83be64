"""The layers hold: what reads session files never loads what records them.

Files → loader → analysis/replay/CLI must not import capture code (instrumentation, the recording
engine, the public recording API, the internals they share) nor the OpenTelemetry SDK (but for the
modules of ``export`` that hand spans to the SDK's OTLP exporters, loaded only when it runs), and
the format's owner imports no OpenTelemetry at all. Checked two ways: statically over every module's
AST (every import, at any depth), and by importing in a fresh interpreter and looking at
``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "otel_agent_trace"
CAPTURE = (
    "otel_agent_trace.instrumentation",
    "otel_agent_trace.recording",
    "otel_agent_trace.api",
    # _internal.guard (never raise, report once) is shared by every layer; the rest is capture's.
    "otel_agent_trace._internal.sink",
    "otel_agent_trace._internal.genai_spans",
    "otel_agent_trace._internal.sdk_compat",
    "otel_agent_trace.distro",
    "otel_agent_trace.tools",
)
# CLI modules that record by design (resume records its continuation, mcp serves the recorder
# tool) may import capture code inside their functions, never at module level.
RECORDING_CLI = {"otel_agent_trace.cli.resume", "otel_agent_trace.cli.mcp"}
# ``export`` hands spans to the SDK's OTLP exporters (issue 37): these modules of it may load the
# SDK; importing the package (or the CLI command) loads none of it (checked in sys.modules below).
SDK_EXPORT = {
    "otel_agent_trace.offline.export.otlp",
    "otel_agent_trace.offline.export.send",
    "otel_agent_trace.offline.export._grpc",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, top_level_only: bool = False, module: str = "") -> list[tuple[int, str]]:
    """``(line, absolute module)`` for every import in a file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def _modules_under(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _violations(paths: list[Path], forbidden: tuple[str, ...], *, top_level_only: bool = False) -> list[str]:
    out = []
    for path in paths:
        if _module_name(path) in RECORDING_CLI and not top_level_only:
            continue
        for line, target in _imports(path, top_level_only=top_level_only):
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                out.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    return out


def test_the_format_owner_imports_no_opentelemetry_and_no_capture_code():
    paths = _modules_under("session_format")
    assert paths
    assert (
        _violations(paths, ("opentelemetry", "otel_agent_trace.offline", "otel_agent_trace.cli", *CAPTURE))
        == []
    )


def test_offline_code_imports_no_capture_code_no_sdk_and_no_cli():
    paths = _modules_under("offline")
    assert paths
    assert _violations(paths, ("otel_agent_trace.cli", *CAPTURE)) == []
    sdk_free = [p for p in paths if _module_name(p) not in SDK_EXPORT]
    assert _violations(sdk_free, ("opentelemetry.sdk", "opentelemetry.exporter")) == []


def test_cli_modules_load_no_capture_code_at_import():
    paths = _modules_under("cli")
    assert _violations(paths, ("opentelemetry.sdk", *CAPTURE), top_level_only=True) == []
    recording_free = [p for p in paths if _module_name(p) not in RECORDING_CLI]
    assert _violations(recording_free, ("opentelemetry.sdk", *CAPTURE)) == []


def test_the_checker_sees_relative_and_nested_imports(tmp_path):
    """The static check must be able to fail: a nested relative import of capture code is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..recording import recorder\n    import opentelemetry.sdk.trace\n")
    found = [t for _, t in _imports(probe, module="otel_agent_trace.offline.probe")]
    assert "otel_agent_trace.recording.recorder" in found
    assert "opentelemetry.sdk.trace" in found


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("statement", "forbidden"),
    [
        ("import otel_agent_trace.session_format", ("opentelemetry",) + CAPTURE),
        ("import otel_agent_trace", ("opentelemetry",) + CAPTURE),
        ("import otel_agent_trace.offline", ("opentelemetry.sdk",) + CAPTURE),
        ("import otel_agent_trace.offline.export", ("opentelemetry.sdk", "opentelemetry.exporter") + CAPTURE),
        ("import otel_agent_trace.cli.export", ("opentelemetry.sdk", "opentelemetry.exporter") + CAPTURE),
        ("from otel_agent_trace.cli import main", ("opentelemetry.sdk",) + CAPTURE),
    ],
)
def test_importing_loads_only_what_it_needs(statement, forbidden):
    loaded = _loaded_after(statement)
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden)]
    assert bad == [], f"{statement!r} loaded {bad}"


def test_the_root_package_still_offers_its_names_lazily():
    loaded = _loaded_after(
        "import otel_agent_trace as oat\nassert callable(oat.load_session) and callable(oat.session)"
    )
    assert "otel_agent_trace.offline.loader" in loaded and "otel_agent_trace.api" in loaded
