"""The CrewAI tests, in a virtualenv of their own (CrewAI pins its own openai < 3, mcp and
pydantic): ``python -m tests.services.crewai_venv install | run`` (see :mod:`tests.services.leg`);
``$AGENT_TRACE_CREWAI_VENV``, default ``~/.cache/otel-agent-trace/crewai-venv``, pinned by
``tests/constraints-crewai.txt``."""

from __future__ import annotations

import sys

from tests.services.leg import REPO, Leg

CREWAI = Leg(
    name="crewai_venv",
    env_var="AGENT_TRACE_CREWAI_VENV",
    default_dir="~/.cache/otel-agent-trace/crewai-venv",
    packages=("crewai",),
    constraints=REPO / "tests" / "constraints-crewai.txt",
    tests=(
        "tests/frameworks/test_crewai.py",
        "tests/model_replay/test_replay_agent_frameworks.py",  # (the frameworks not installed: skipped)
    ),
)

if __name__ == "__main__":
    sys.exit(CREWAI.main(sys.argv[1:]))
