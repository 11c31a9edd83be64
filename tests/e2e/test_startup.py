"""Start-up: instrumentors of libraries the agent never imports cost it nothing; a library
imported later is still instrumented (the post-import hook)."""

from __future__ import annotations

import json

from otel_agent_trace.instrumentation.parts import PARTS, WAITS_FOR

from .helpers import run_instrumented

LIBRARIES = (
    "openai",
    "anthropic",
    "botocore",
    "ollama",
    "mistralai",
    "groq",
    "cohere",
    "litellm",
    "dspy",
    "google.genai",
    "strands",
    "agents",
    "langchain_core",
    "mcp",
    "pydantic_ai",
    "smolagents",
    "llama_index.core",
    "autogen_agentchat",
    "crewai",
    "google.adk",
    "agno",
)

_PROBE = """
import json, sys
loaded_at_start = [m for m in {libs!r} if m in sys.modules]
parts_at_start = [m for m in sys.modules
                  if m.startswith("otel_agent_trace.") and m.rpartition(".")[2] in {parts!r}]
import openai
from openai.resources.chat.completions import Completions
print(json.dumps({{"loaded_at_start": loaded_at_start, "parts_at_start": parts_at_start,
                  "openai_part_after_import": "otel_agent_trace.instrumentation.openai" in sys.modules,
                  "wrapped_after_import": hasattr(Completions.create, "__wrapped__")}}))
"""
# the modules of the library parts (their names under otel_agent_trace.instrumentation)
LIBRARY_PARTS = tuple(PARTS[name].partition(":")[0] for name in WAITS_FOR)


def test_unused_libraries_are_not_imported_at_start_and_used_ones_are_instrumented(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_PROBE.format(libs=LIBRARIES, parts=LIBRARY_PARTS))
    done = run_instrumented(script, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded_at_start"] == []
    assert result["parts_at_start"] == []  # a library's part is loaded with its library
    assert result["openai_part_after_import"] is True
    assert result["wrapped_after_import"] is True


def test_a_bad_setting_is_one_clear_line_and_the_agent_runs_unrecorded(tmp_path):
    from .helpers import DEMO_AGENT, clean_env

    done = run_instrumented(DEMO_AGENT, tmp_path, clean_env({"AGENT_TRACE_TIER": "bogus"}))
    assert done.returncode == 0
    assert "demo agent and its demo model" in done.stdout
    assert done.stderr.strip().splitlines() == [
        "otel-agent-trace: AGENT_TRACE_TIER='bogus': expected trace, checkpoint or both. "
        "Nothing is recorded until this is fixed."
    ]
    assert not (tmp_path / "agent-sessions").exists()


def test_recording_can_be_switched_off(tmp_path):
    from .helpers import DEMO_AGENT, clean_env

    done = run_instrumented(DEMO_AGENT, tmp_path, clean_env({"AGENT_TRACE_RECORD": "false"}))
    assert done.returncode == 0 and done.stderr == ""
    assert "demo agent and its demo model" in done.stdout
    assert not (tmp_path / "agent-sessions").exists()
