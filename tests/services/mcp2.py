"""The MCP tests on mcp 2.x, in a virtualenv of their own (the main one has mcp 1.x, which the
rest of the test dependencies pin).

``python -m tests.services.mcp2 install | run [pytest options] | pin`` (see
:mod:`tests.services.leg`): ``$AGENT_TRACE_MCP2_VENV``, default ``~/.cache/otel-agent-trace/mcp2-venv``,
mcp 2.3 pinned by ``tests/constraints-mcp2.txt``; :data:`TESTS` run there (.ci/run).
"""

from __future__ import annotations

import sys

from tests.services.leg import REPO, Leg

MCP_VERSION = "2.3.0"
# every MCP test that needs no other framework: client, server, zero-code, model replay
TESTS = (
    "tests/tools/test_mcp.py",
    "tests/tools/test_mcp_zero_code.py",
    "tests/tools/test_session_recorder.py::test_mcp_server_in_memory",
    "tests/tools/test_session_recorder.py::test_cli_mcp_stdio_server",
    "tests/model_replay/test_framework_tools.py::test_tools_recorded_answers_a_bare_mcp_call_tool_and_never_calls_the_server",
    "tests/model_replay/test_framework_tools.py::test_with_tools_live_the_mcp_server_runs_the_tool_without_its_file",
)


MCP2 = Leg(
    name="mcp2",
    env_var="AGENT_TRACE_MCP2_VENV",
    default_dir="~/.cache/otel-agent-trace/mcp2-venv",
    packages=(f"mcp=={MCP_VERSION}", "openai"),
    constraints=REPO / "tests" / "constraints-mcp2.txt",
    tests=TESTS,
    runner=("pytest", "pytest-asyncio", "packaging"),
    pytest_args=(),
    show=("mcp",),
)


if __name__ == "__main__":
    sys.exit(MCP2.main(sys.argv[1:]))
