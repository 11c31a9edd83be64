"""The tests of the agent frameworks that cannot share the main test environment, each set in a
virtualenv of its own (the main one pins openai 3.x and mcp 1.30):

* ``frameworks2``: LlamaIndex (``llama-index-llms-openai``) and AutoGen (``autogen-ext[openai]``),
  which need openai < 3 (``tests/constraints-frameworks2.txt``);
* ``crewai_venv``: CrewAI, which pins its own openai, mcp and pydantic
  (``tests/constraints-crewai.txt``);
* ``adk_venv``: Google ADK, which pins google-genai < 3 and its own OpenTelemetry
  (``tests/constraints-adk.txt``).

``python -m tests.services.frameworks2 install | run | pin``: see :mod:`tests.services.leg`;
``$AGENT_TRACE_FRAMEWORKS2_VENV``, default ``~/.cache/otel-agent-trace/frameworks-openai2-venv``.
"""

from __future__ import annotations

import sys

from tests.services.leg import REPO, Leg

FRAMEWORKS2 = Leg(
    name="frameworks2",
    env_var="AGENT_TRACE_FRAMEWORKS2_VENV",
    default_dir="~/.cache/otel-agent-trace/frameworks-openai2-venv",
    packages=("llama-index-core", "llama-index-llms-openai", "autogen-agentchat", "autogen-ext[openai]"),
    constraints=REPO / "tests" / "constraints-frameworks2.txt",
    tests=(
        "tests/frameworks/test_llamaindex.py",
        "tests/frameworks/test_autogen.py",
        "tests/frameworks/test_autogen_teams.py",
        "tests/model_replay/test_replay_agent_frameworks.py",  # (the frameworks not installed: skipped)
    ),
)


if __name__ == "__main__":
    sys.exit(FRAMEWORKS2.main(sys.argv[1:]))
