"""``otel-agent-trace list [DIR]``: the sessions in a directory, newest first."""

from __future__ import annotations

import argparse
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import iter_entries
from otel_agent_trace.settings import get_settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list recorded sessions")
    p.add_argument("directory", nargs="?", help="sessions directory (default: AGENT_TRACE_DIR)")
    p.set_defaults(func=run)


def summarize(path: Path) -> dict[str, object]:
    issues: list[fmt.ReadIssue] = []
    first: dict[str, object] | None = None
    count = 0
    ended = False
    for entry in iter_entries(path, issues):
        count += 1
        first = first or entry
        ended = ended or entry.get("type") == fmt.SESSION_END
    return {
        "path": str(path),
        "session_id": (first or {}).get("session_id"),
        "tier": (first or {}).get("tier"),
        "child": (first or {}).get("type") == fmt.SESSION_JOIN,
        "entries": count,
        "complete": ended,
        "issues": len(issues),
    }


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory) if args.directory else get_settings().directory
    files = sorted(directory.glob(f"*{fmt.JSONL_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
    if not files:
        print(f"no sessions in {directory}")
        return 0
    summaries = []
    children: dict[object, int] = {}
    for path in files:
        try:
            s = summarize(path)
        except (fmt.SessionFormatError, OSError) as exc:
            print(f"{path}: unreadable: {exc}")
            continue
        if s["child"]:  # a child process's file belongs to its parent's session
            children[s["session_id"]] = children.get(s["session_id"], 0) + 1
        else:
            summaries.append(s)
    for s in summaries:
        path = Path(str(s["path"]))
        state = "complete" if s["complete"] else "unfinished"
        zips = sorted(directory.glob(f"{s['session_id']}*{fmt.ZIP_SUFFIX}"))
        print(
            f"{path.name}  {s['tier']}  {s['entries']} entries  {state}"
            + (f"  +{children[s['session_id']]} child process file(s)" if s["session_id"] in children else "")
            + (f"  zip: {', '.join(z.name for z in zips)}" if zips else "")
        )
    return 0
