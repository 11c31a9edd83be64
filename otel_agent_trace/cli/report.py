"""``otel-agent-trace report SESSION [-o OUT]``: a Markdown report of a run, written after the
fact — run metadata, the model and tool calls in order, the final answer, the failures, the
verification and the health grade.

Exit codes: 0 written; 2 bad input (or ``OUT`` exists already: it is never overwritten).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from otel_agent_trace.offline import analysis
from otel_agent_trace.offline.terminal import clean, json_document


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a Markdown report of a run",
        description="Write a Markdown report of one run: its metadata, steps, final answer, failures and "
        "health. Exit 0 when written, 2 for bad input or an -o file that exists (never overwritten).",
    )
    p.add_argument("path", help="session .jsonl (its child files are read too) or .zip")
    p.add_argument("-o", "--output", metavar="OUT", help="write here (a new file) instead of standard output")
    p.add_argument("--strict", action="store_true", help="a bad line is an error (default: skipped, listed)")
    p.add_argument(
        "--json",
        action="store_true",
        help='print one JSON document: {"session", "output"} and, without -o, the report as "markdown"',
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    text = analysis.report(path, strict=args.strict)
    if not args.output:
        sys.stdout.write(
            json_document({"session": str(path), "output": None, "markdown": text}) if args.json else text
        )
        return 0
    try:
        with open(args.output, "x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:  # exists already (never overwritten), or cannot be created
        print(f"otel-agent-trace: {clean(args.output)}: {clean(exc.strerror or exc)}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(
            json_document({"session": str(path), "output": args.output, "bytes": len(text.encode())})
        )
    else:
        print(f"report written to {clean(args.output)}")
    return 0
