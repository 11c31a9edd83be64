"""``otel-agent-trace mcp``: the session recorder tool as an MCP server on stdio."""

from __future__ import annotations

import argparse
import os
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the session_recorder tool over MCP (stdio)",
        description="Serve the session_recorder tool (start, snapshot, status, list, stop) to an MCP "
        "client over stdio. Needs the MCP SDK: pip install 'otel-agent-trace[mcp]'. A server, not a "
        "report: it speaks MCP's JSON-RPC on standard input and output, so it has no --json.",
    )
    p.add_argument("--directory", help="sessions directory (default: AGENT_TRACE_DIR or ./agent-sessions)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.directory:
        from otel_agent_trace.settings import ENV_DIR, set_settings

        os.environ[ENV_DIR] = os.path.abspath(args.directory)
        set_settings(None)
    try:
        from otel_agent_trace.tools.mcp_server import run_stdio
    except ImportError as exc:  # the MCP SDK is an extra
        if exc.name is None or not exc.name.split(".")[0] == "mcp":
            raise
        print(
            "otel-agent-trace: 'mcp' needs the MCP SDK, which is not installed: "
            "pip install 'otel-agent-trace[mcp]'",
            file=sys.stderr,
        )
        return 2
    run_stdio()
    return 0
