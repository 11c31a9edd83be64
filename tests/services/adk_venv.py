"""The Google ADK tests, in a virtualenv of their own (google-adk pins google-genai < 3 and its own
OpenTelemetry; its OpenAI model needs openai < 3): ``python -m tests.services.adk_venv install |
run`` (see :mod:`tests.services.leg`); the Google Gen AI tests run here too, on the
google-genai 2.x that ADK installs; ``$AGENT_TRACE_ADK_VENV``, default
``~/.cache/otel-agent-trace/adk-venv``, pinned by ``tests/constraints-adk.txt``."""

from __future__ import annotations

import sys

from tests.services.leg import REPO, Leg

ADK = Leg(
    name="adk_venv",
    env_var="AGENT_TRACE_ADK_VENV",
    default_dir="~/.cache/otel-agent-trace/adk-venv",
    packages=("google-adk", "openai"),
    constraints=REPO / "tests" / "constraints-adk.txt",
    tests=(
        "tests/frameworks/test_google_adk.py",
        "tests/frameworks/test_google_adk_gemini.py",
        # a transfer to a sub-agent; a SequentialAgent, a LoopAgent, a ParallelAgent
        "tests/frameworks/test_google_adk_multi_agent.py",
        "tests/genai/test_google_genai.py",  # google-genai 2.x, as ADK installs it (3.x: genai.py)
        "tests/model_replay/test_replay_agent_frameworks.py",  # (the frameworks not installed: skipped)
    ),
)

if __name__ == "__main__":
    sys.exit(ADK.main(sys.argv[1:]))
