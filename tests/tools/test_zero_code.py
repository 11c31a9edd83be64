"""Under ``opentelemetry-instrument`` with no tracing code: tool spans appear with their call ids,
and every declared supported range covers the installed library."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from otel_agent_trace.instrumentation import langchain_tools, mcp, openai_agents, strands_tools
from tests.context.helpers import by_name, spans_of
from tests.e2e.helpers import INSTRUMENT, clean_env

AGENT = Path(__file__).parent / "agents" / "zero_code_tools.py"


@pytest.mark.parametrize("module", [langchain_tools, mcp, openai_agents, strands_tools])
def test_declared_range_covers_the_installed_version(module):
    (requirement,) = [Requirement(r) for r in module.package._instruments]
    assert requirement.specifier.contains(version(requirement.name), prereleases=True)


def test_tools_are_recorded_without_code(tmp_path):
    done = subprocess.run(
        [INSTRUMENT, sys.executable, str(AGENT)],
        cwd=tmp_path,
        env=clean_env({"AGENT_TRACE_DIR": "sessions"}),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sunny", "in", "Oslo", "hi"]
    (zip_path,) = (tmp_path / "sessions").glob("*.zip")
    spans = spans_of(zip_path)
    lookup = by_name(spans, "execute_tool lookup")
    assert lookup.attributes["gen_ai.tool.call.id"] == "call_weather"
    assert lookup.content["tool_arguments"] == {"city": "Oslo"}
    echo = by_name(spans, "execute_tool echo")
    assert echo.attributes["gen_ai.tool.description"] == "Echo a text."
    assert echo.content["tool_arguments"] == {"text": "hi"}
