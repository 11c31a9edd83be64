"""MCP under ``opentelemetry-instrument`` with no tracing code, on whichever major of mcp is
installed (1.x here; 2.x in ``python -m tests.services.mcp2 run``): the declared range covers it,
nothing warns, and the tool call is one ``execute_tool`` span with its arguments and result."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

from otel_agent_trace.instrumentation import mcp
from tests.context.helpers import by_name, spans_of
from tests.e2e.helpers import INSTRUMENT, clean_env

AGENT = Path(__file__).parent / "agents" / "zero_code_mcp.py"


def test_declared_range_covers_the_installed_mcp():
    (requirement,) = [Requirement(r) for r in mcp.package._instruments]
    assert requirement.specifier.contains(version("mcp"), prereleases=True)


def test_an_mcp_tool_call_is_recorded_without_code_or_warning(tmp_path):
    done = subprocess.run(
        [INSTRUMENT, sys.executable, str(AGENT)],
        cwd=tmp_path,
        env=clean_env({"AGENT_TRACE_DIR": "sessions"}),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hi"]
    assert "only instruments" not in done.stderr, done.stderr
    (zip_path,) = (tmp_path / "sessions").glob("*.zip")
    spans = spans_of(zip_path)
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert [s.name for s in tools] == ["execute_tool echo"]  # one span for the call, ours
    echo = by_name(spans, "execute_tool echo")
    assert echo.attributes["gen_ai.tool.description"] == "Echo a text."
    assert echo.attributes["mcp.method.name"] == "tools/call"
    assert echo.content["tool_arguments"] == {"text": "hi"}
    assert echo.content["tool_result"]["content"][0]["text"] == "hi"
    assert echo.content["tool_result"]["isError"] is False
