"""``otel-agent-trace replay SESSION``: dry replay (default), ``--execute-tools`` (tool replay in a
workspace) or ``--step`` (an interactive stepper)."""

from __future__ import annotations

import argparse
import os
import sys

from otel_agent_trace.offline.loader import load_session
from otel_agent_trace.offline.replay import EntryNotFound, replay_events, replay_tools
from otel_agent_trace.offline.replay.stepper import Stepper
from otel_agent_trace.offline.terminal import clean, fit, width


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a session: check it, step through it, or re-run its tools")
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument("--start", help="first entry (id or unique prefix)")
    p.add_argument("--end", help="last entry (id or unique prefix)")
    p.add_argument("--step", action="store_true", help="step through the session interactively")
    p.add_argument("--execute-tools", action="store_true", help="re-run recorded tool calls and compare")
    p.add_argument("--workspace", help="directory the tools run in (created if missing)")
    p.add_argument("--allow-shell", action="store_true", help="also re-run tools that ran commands")
    p.add_argument("--allow-writes", action="store_true", help="also re-run tools that wrote files")
    p.add_argument("--tool", help="only calls of this tool")
    p.add_argument(
        "--import-path",
        action="append",
        default=[],
        metavar="DIR",
        help="where the tools' modules are (besides the current directory and installed packages)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per tool call (default 60)")
    p.add_argument("--verbose", "-v", action="store_true", help="every entry walked, one line each")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.step:
        return _step(args)
    if args.execute_tools:
        return _tools(args)
    session = load_session(args.path)
    cols = width()
    lines: list[str] = []

    def show(event: object) -> None:
        if args.verbose:
            from otel_agent_trace.offline.replay.stepper import describe

            lines.append(fit(f"{event.id}  {describe(event)}", cols))  # type: ignore[attr-defined]

    try:
        report = replay_events(session, show, start=args.start, end=args.end)
    except EntryNotFound as exc:
        print(f"otel-agent-trace: {args.path}: {clean(exc)}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    state = (
        "complete" if report.complete else "unfinished (no session.end: the process was stopped or killed)"
    )
    print(
        f"{clean(session.session_id)}: {report.entries} entries walked "
        f"({clean(report.first_id)} … {clean(report.last_id)}), {state}"
    )
    print("  " + ", ".join(f"{clean(k)} {v}" for k, v in sorted(report.counts.items())))
    for f in report.findings:
        mark = "error" if f.is_error else "note"
        print(fit(f"  {mark}: {f.kind} {f.entry_id} {f.detail}", cols))
    print("dry replay: nothing was run; " + ("timeline consistent" if report.ok else "timeline has errors"))
    return 0 if report.ok else 1


def _tools(args: argparse.Namespace) -> int:
    if not args.workspace:
        print("otel-agent-trace: --execute-tools needs --workspace DIR (tools run there)", file=sys.stderr)
        return 2
    session = load_session(args.path)
    report = replay_tools(
        session,
        execute=True,
        workspace=args.workspace,
        allow_shell=args.allow_shell,
        allow_writes=args.allow_writes,
        only=args.tool,
        timeout=args.timeout,
        import_paths=[os.path.abspath(p) for p in args.import_path],
    )
    cols = width()
    print(f"tool replay of {clean(session.session_id)} ({report.tier} tier) in {clean(args.workspace)}")
    if report.tier != "checkpoint":
        print(
            "  trace tier: arguments are redacted previews; calls whose arguments are not exact are not run"
        )
    for c in report.calls:
        print(fit(f"  {c.status:<8} {c.call.entry_id}  {c.call.name}: {c.detail}", cols))
    summary = ", ".join(
        f"{report.count(s)} {s}" for s in ("ok", "mismatch", "error", "blocked", "unknown", "skipped")
    )
    print(f"{len(report.calls)} calls: {summary}")
    return report.exit_code


def _step(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "otel-agent-trace: replay --step is interactive and needs a terminal; "
            "use 'otel-agent-trace replay -v' or 'otel-agent-trace view' in a pipe",
            file=sys.stderr,
        )
        return 2
    session = load_session(args.path)
    stepper = Stepper(session, width=width())
    if args.start:
        stepper.handle(f"j {args.start}")
    stepper.run()
    return 0
