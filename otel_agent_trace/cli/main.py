"""Entry point of the ``otel-agent-trace`` command."""

from __future__ import annotations

import argparse
import sys

from otel_agent_trace._version import __version__
from otel_agent_trace.session_format import SessionFormatError

from . import analyze, diff, export, fork, listing, mcp, prune, replay, report, resume, view

SUBCOMMANDS = [view, listing, prune, mcp, replay, fork, resume, export, analyze, diff, report]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="otel-agent-trace", description="Record, inspect and replay AI agent runs."
    )
    parser.add_argument("--version", action="version", version=f"otel-agent-trace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (SessionFormatError, FileNotFoundError) as exc:
        print(f"otel-agent-trace: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
