"""Entry point of the ``otel-agent-trace`` command.

Each subcommand lives in a module of its own, imported only when it runs (``view`` of a large
session shows its first screen sooner when the command does not first load the OTLP exporter,
the analysis and the resume machinery).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from otel_agent_trace._version import __version__

# command → the module (in otel_agent_trace.cli) whose add_parser defines it, in --help order
COMMANDS: dict[str, str] = {
    "view": "view",
    "list": "listing",
    "prune": "prune",
    "mcp": "mcp",
    "replay": "replay",
    "fork": "fork",
    "resume": "resume",
    "export": "export",
    "export-dir": "export",
    "analyze": "analyze",
    "analyze-dir": "analyze",
    "diff": "diff",
    "report": "report",
}


def _modules(command: str | None) -> list[ModuleType]:
    names = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    return [importlib.import_module(f"{__package__}.{name}") for name in names]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command's module is imported and defined."""
    parser = argparse.ArgumentParser(
        prog="otel-agent-trace", description="Record, inspect and replay AI agent runs."
    )
    parser.add_argument("--version", action="version", version=f"otel-agent-trace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _modules(command):
        module.add_parser(sub)
    return parser


def _command_of(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    from otel_agent_trace.offline.terminal import clean
    from otel_agent_trace.session_format import SessionFormatError

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_of(argv)).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (SessionFormatError, FileNotFoundError) as exc:
        print(f"otel-agent-trace: {clean(exc)}", file=sys.stderr)  # a file's text, made safe
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
