"""``otel-agent-trace mcp``: the session recorder tool as an MCP server on stdio."""

from __future__ import annotations

import argparse
import os


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve the session_recorder tool over MCP (stdio)")
    p.add_argument("--directory", help="sessions directory (default: AGENT_TRACE_DIR or ./agent-sessions)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.directory:
        from otel_agent_trace.settings import ENV_DIR, set_settings

        os.environ[ENV_DIR] = os.path.abspath(args.directory)
        set_settings(None)
    from otel_agent_trace.tools.mcp_server import run_stdio

    run_stdio()
    return 0
