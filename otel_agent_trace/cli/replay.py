"""``otel-agent-trace replay SESSION``: dry replay (default), ``--execute-tools`` (tool replay in a
workspace), ``--step`` (an interactive stepper) or ``--model-replay -- COMMAND`` (the agent run
again with its model calls answered from the recording, in a child process: docs/model-replay.md)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from otel_agent_trace.cli.loading import add_max_entries, load
from otel_agent_trace.offline.replay import EntryNotFound, replay_events, replay_tools
from otel_agent_trace.offline.replay.stepper import Stepper
from otel_agent_trace.offline.terminal import clean, fit, json_document, width


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a session: check it, step through it, or re-run its tools",
        description="Check a session's timeline (default), step through it (--step), re-run its tool "
        "calls with YOUR tools (--execute-tools --tools-from, fenced to --workspace), or run your agent "
        "again with its model calls answered from the recording (--model-replay; tools answered from "
        "the recording too unless --tools live). A session file is data: it never names code that runs.",
    )
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument("--start", help="first entry (id or unique prefix)")
    p.add_argument("--end", help="last entry (id or unique prefix)")
    p.add_argument("--step", action="store_true", help="step through the session interactively")
    p.add_argument(
        "--execute-tools",
        action="store_true",
        help="re-run the recorded tool calls with YOUR tools (--tools-from) in --workspace and compare",
    )
    p.add_argument("--workspace", help="directory the tools run in (created if missing)")
    p.add_argument(
        "--tools-from",
        action="append",
        default=[],
        metavar="MODULE|MODULE:ATTR|SCRIPT.py",
        help="your code that defines the tools (repeatable); the file only selects among them, "
        "it never names code to run",
    )
    p.add_argument(
        "--allow-shell",
        action="store_true",
        help="let re-run tools start processes (with arguments from the file: only for a file you trust)",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="let re-run tools write files, inside --workspace only",
    )
    p.add_argument("--allow-network", action="store_true", help="let re-run tools use the network")
    p.add_argument("--tool", help="only calls of this tool")
    p.add_argument(
        "--import-path",
        action="append",
        default=[],
        metavar="DIR",
        help="where --tools-from modules are (besides the current directory and installed packages)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per tool call (default 60)")
    p.add_argument("--verbose", "-v", action="store_true", help="every entry walked, one line each")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: the dry replay's report, the tool replay's calls, or the model "
        "replay's report (the command's own output then goes to standard error); not with --step",
    )
    _model_options(p.add_argument_group("model replay (docs/model-replay.md)"))
    p.epilog = (
        "model replay: otel-agent-trace replay SESSION --model-replay [options] -- python agent.py [args]"
    )
    add_max_entries(p)
    p.set_defaults(func=run, command=[])
    _command_after_dashes(p)


def _command_after_dashes(p: argparse.ArgumentParser) -> None:
    """``replay SESSION [options] -- COMMAND ...``: what follows ``--`` is the agent's command,
    kept whole (its own options included) in ``args.command``."""
    parse = p.parse_known_args

    def parse_known_args(args: Any = None, namespace: Any = None) -> Any:
        args = list(sys.argv[1:] if args is None else args)
        command: list[str] = []
        if "--" in args:
            cut = args.index("--")
            args, command = args[:cut], args[cut + 1 :]
        namespace, extras = parse(args, namespace)
        namespace.command = command
        return namespace, extras

    p.parse_known_args = parse_known_args  # type: ignore[method-assign]


def _model_options(m: Any) -> None:
    m.add_argument(
        "--model-replay",
        action="store_true",
        help="run the command after -- with every model call answered from SESSION (checkpoint tier)",
    )
    m.add_argument(
        "--on-divergence",
        choices=("stop", "continue"),
        default="stop",
        help="at a request that differs from the recording: stop there (default) or answer as recorded",
    )
    m.add_argument("--then-live", metavar="URL", help="after a divergence, continue against this endpoint")
    m.add_argument(
        "--tools",
        choices=("live", "recorded"),
        default="recorded",
        help="recorded (default): answer the agent's tool calls from SESSION, run none; live: run your "
        "real tools with the arguments the replayed model answers ask for (only for a file you trust)",
    )
    m.add_argument("--report", metavar="PATH", help="also write the replay report (JSON) here")


def run(args: argparse.Namespace) -> int:
    if args.model_replay or args.command:
        return _model_replay(args)
    if args.step:
        if args.json:
            print("otel-agent-trace: replay --step is interactive: it has no --json", file=sys.stderr)
            return 2
        return _step(args)
    if args.execute_tools:
        return _tools(args)
    session = load(args)
    cols = width()
    lines: list[str] = []

    walked: list[dict[str, str]] = []

    def show(event: object) -> None:
        if args.verbose:
            from otel_agent_trace.offline.replay.stepper import describe

            if args.json:
                walked.append({"id": event.id, "text": describe(event)})  # type: ignore[attr-defined]
            else:
                lines.append(fit(f"{event.id}  {describe(event)}", cols))  # type: ignore[attr-defined]

    try:
        report = replay_events(session, show, start=args.start, end=args.end)
    except EntryNotFound as exc:
        print(f"otel-agent-trace: {args.path}: {clean(exc)}", file=sys.stderr)
        return 2
    if args.json:
        answer: dict[str, Any] = {
            "mode": "dry",
            "session_id": session.session_id,
            "entries": report.entries,
            "first_id": report.first_id,
            "last_id": report.last_id,
            "complete": report.complete,
            "counts": report.counts,
            "findings": [
                {"kind": f.kind, "entry_id": f.entry_id, "detail": f.detail, "error": f.is_error}
                for f in report.findings
            ],
            "ok": report.ok,
        }
        if args.verbose:
            answer["walked"] = walked
        sys.stdout.write(json_document(answer))
        return 0 if report.ok else 1
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
    session = load(args)
    if not args.tools_from:
        print(
            "otel-agent-trace: --execute-tools needs --tools-from MODULE|SCRIPT: the code that defines "
            "the tools (a session file never chooses what runs)",
            file=sys.stderr,
        )
        return 2
    report = replay_tools(
        session,
        execute=True,
        workspace=args.workspace,
        tools_from=args.tools_from,
        allow_shell=args.allow_shell,
        allow_writes=args.allow_writes,
        allow_network=args.allow_network,
        only=args.tool,
        timeout=args.timeout,
        import_paths=[os.path.abspath(p) for p in args.import_path],
    )
    if args.json:
        calls = [
            {"status": c.status, "entry_id": c.call.entry_id, "name": c.call.name, "detail": c.detail}
            for c in report.calls
        ]
        answer = {
            "mode": "execute-tools",
            "session_id": session.session_id,
            "tier": report.tier,
            "workspace": args.workspace,
            "calls": calls,
            "counts": {
                s: report.count(s) for s in ("ok", "mismatch", "error", "blocked", "unknown", "skipped")
            },
        }
        sys.stdout.write(json_document(answer))
        return report.exit_code
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
    session = load(args)
    stepper = Stepper(session, width=width())
    if args.start:
        stepper.handle(f"j {args.start}")
    stepper.run()
    return 0


def _model_replay(args: argparse.Namespace) -> int:
    """Run the command under ``opentelemetry-instrument`` with the replay asked for in its
    environment (read at start-up by the HTTP instrumentation); then print the child's report."""
    import json
    import shutil
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    from otel_agent_trace.model_replay._recording import RecordingError, load_recording

    command = list(args.command)
    if not args.model_replay or not command:
        print(
            "otel-agent-trace: usage: replay SESSION --model-replay [options] -- python agent.py [args]",
            file=sys.stderr,
        )
        return 2
    try:
        recording = load_recording(args.path)
    except RecordingError as exc:
        print(f"otel-agent-trace: {clean(exc)}", file=sys.stderr)
        return 2
    instrument = shutil.which(
        "opentelemetry-instrument", path=os.path.dirname(sys.executable)
    ) or shutil.which("opentelemetry-instrument")
    if os.path.basename(command[0]) != "opentelemetry-instrument":
        if instrument is None:
            print(
                "otel-agent-trace: opentelemetry-instrument not found (pip install opentelemetry-distro)",
                file=sys.stderr,
            )
            return 2
        command = [instrument, *command]
    with tempfile.TemporaryDirectory(prefix="oat-replay-") as tmp:
        report_path = args.report or os.path.join(tmp, "report.json")
        env = dict(os.environ)
        env.update(
            {
                "AGENT_TRACE_MODEL_REPLAY": os.path.abspath(args.path),
                "AGENT_TRACE_MODEL_REPLAY_ON_DIVERGENCE": "live" if args.then_live else args.on_divergence,
                "AGENT_TRACE_MODEL_REPLAY_TOOLS": args.tools,
                "AGENT_TRACE_MODEL_REPLAY_REPORT": os.path.abspath(report_path),
                "AGENT_TRACE_REPLAY_OF": recording.session_id,
            }
        )
        if args.then_live:
            env["AGENT_TRACE_MODEL_REPLAY_LIVE_URL"] = args.then_live
        env.setdefault("AGENT_TRACE_TIER", "checkpoint")  # the new run is replayable and diffable too
        started = time.time()
        # --json: our standard output is the report alone; the command's goes to standard error
        code = subprocess.run(command, env=env, stdout=sys.stderr if args.json else None).returncode
        try:
            report = json.loads(Path(report_path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            print(
                f"otel-agent-trace: model replay: the command left no replay report (exit {code}); "
                "was it a Python program run under our instrumentation?",
                file=sys.stderr,
            )
            return code or 2
    replayed = _replayed_run(started)
    if args.json:
        sys.stdout.write(json_document({"mode": "model-replay", **report, "replayed_session": replayed}))
    else:
        _print_model_replay(report, args, replayed)
    if code:
        return code
    return 1 if report.get("divergences") or report.get("refused") else 0


def _replayed_run(started: float) -> str | None:
    """The session file the replayed run recorded (the newest since it started), if any."""
    from pathlib import Path

    directory = Path(os.environ.get("AGENT_TRACE_DIR") or "agent-sessions")
    new = sorted(
        (p for p in directory.glob("session-*.jsonl") if p.stat().st_mtime >= started - 1),
        key=lambda p: p.stat().st_mtime,
    )
    return str(new[-1]) if new else None


def _print_model_replay(report: dict, args: argparse.Namespace, replayed: str | None) -> None:
    cols = width()
    print(
        f"model replay of {clean(report.get('source_session'))}: {len(report.get('calls') or [])} requests, "
        f"{report.get('answered', 0)} answered from the recording "
        f"({report.get('recorded_exchanges', 0)} recorded, {report.get('unused', 0)} unused)"
    )
    for call in report.get("calls") or []:
        where = (
            f"recorded #{call['recorded_index']} ({call.get('entry_id')})"
            if call.get("recorded_index")
            else ""
        )
        if call.get("origin"):
            where += f" ({call['origin']})"
        line = f"  call {call.get('call')}: {call.get('status')}  {call.get('request')}  {where}"
        print(fit(line.rstrip(), cols))
    volatile = [c for c in report.get("calls") or [] if c.get("volatile")]
    if volatile:
        print(
            f"volatile (not divergences): {report.get('volatile_values', 0)} values that change from "
            f"run to run, in {len(volatile)} call(s)"
        )
        for call in volatile:
            for note in call["volatile"]:
                print(fit(f"  call {call.get('call')}: {note}", cols))
    divergences = report.get("divergences") or []
    if divergences:
        first = divergences[0]
        print(
            f"first divergence at call {first.get('call')} (recorded entry {clean(first.get('entry_id'))}):"
        )
        for difference in first.get("differences") or []:
            for line in str(difference).split("\n"):  # a text's diff: one line each, escaped alone
                print("  " + clean(line))
        if len(divergences) > 1:
            print(f"  … and {len(divergences) - 1} later divergence(s)")
    for refused in report.get("refused") or []:
        print(fit(f"  refused (not sent): {clean(refused)}", cols))
    if report.get("live"):
        print(f"continued live against {clean(args.then_live)} after the divergence")
    if not divergences and not report.get("refused"):
        print("no divergence: the run made the recorded requests, in order")
    if replayed:
        print(
            f"the replayed run: {clean(replayed)}\n"
            f"  compare: otel-agent-trace diff {clean(args.path)} {clean(replayed)}"
        )
