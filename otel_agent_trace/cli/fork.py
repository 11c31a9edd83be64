"""``otel-agent-trace fork SESSION --at ID [--output PATH]``: branch a session at an entry."""

from __future__ import annotations

import argparse
import shlex
import sys

from otel_agent_trace.cli.loading import add_max_entries, load
from otel_agent_trace.offline.fork import fork_session
from otel_agent_trace.offline.replay import EntryNotFound
from otel_agent_trace.offline.terminal import clean, json_document


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fork",
        help="branch a session at an entry into a new file",
        description="Copy a session up to an entry (--at) into a new file that ends there with a fork "
        "entry, and say whether it can be resumed from that point (otel-agent-trace resume). The source "
        "is never changed and an existing file never overwritten. Exit codes: 0 forked, 2 bad input (a "
        "missing or bad session file, an unknown entry, an --output that exists).",
    )
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument("--at", required=True, help="fork point: entry id or unique prefix")
    p.add_argument("--output", help="new file (never overwritten; default beside the source)")
    p.add_argument(
        "--json", action="store_true", help="print one JSON document: the new file and what it holds"
    )
    add_max_entries(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    session = load(args)
    try:
        result = fork_session(session, args.at, args.output)
    except EntryNotFound as exc:
        print(f"otel-agent-trace: {args.path}: {clean(exc)}", file=sys.stderr)
        return 2
    except FileExistsError as exc:
        print(
            f"otel-agent-trace: {clean(exc.filename)} exists: a fork never overwrites a file", file=sys.stderr
        )
        return 2
    if args.json:
        sys.stdout.write(
            json_document(
                {
                    "path": str(result.path),
                    "source_session": result.source_session,
                    "fork_point": result.fork_point,
                    "entries_copied": result.entries_copied,
                    "tier": result.tier,
                    "resumable": result.resumable,
                    "reason": result.reason,
                    "snapshot_id": result.snapshot_id,
                    "messages": result.messages,
                    "cut": result.cut,
                    "resume_command": result.resume_command(),
                }
            )
        )
        return 0
    print(
        f"forked {clean(result.source_session)} at {clean(result.fork_point)}: "
        f"{result.entries_copied} entries + 1 fork entry -> {clean(result.path)} ({result.tier} tier)"
    )
    if result.resumable:
        print(f"resumable: {clean(result.reason)}")
        print(
            "  otel-agent-trace resume "
            + clean(shlex.quote(str(result.path)))
            + f' --at {clean(result.fork_point)} --agent your_module:make_agent "your next question"'
        )
    else:
        print(f"not resumable: {clean(result.reason)}")
    return 0
