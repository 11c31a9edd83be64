"""``otel-agent-trace analyze SESSION`` and ``analyze-dir DIR``: the review checklist of a run
(failure stages, recovery, verification, loops, tokens and latency, health), or of every run of
a directory, aggregated.

Exit codes: 0 ok; 1 findings (a run that failed, was cut short, or ended on failing tests or a
limit; for a directory: any such run, or an unreadable file); 2 bad input (missing file or
directory, a file that is not a session).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, Any

from otel_agent_trace.offline import analysis
from otel_agent_trace.offline.analysis.directory import dm_markdown
from otel_agent_trace.offline.terminal import clean, fit, json_document, width

from .progress import Progress


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze",
        help="failure stages, recovery, verification, loops and health of a run",
        description="The review checklist of one run, read in one streaming pass (any file size): status, "
        "failure stages, recovery, verification, loops, tokens and latency, the slowest spans, the final "
        "answer and a health grade (docs/analysis.md). Exit codes: 0 the run ended well, 1 a finding (it "
        "failed, was cut short, or ended on failing tests or a limit), 2 bad input.",
    )
    p.add_argument("path", help="session .jsonl (its child files are read too) or .zip")
    p.add_argument("--json", action="store_true", help="print the analysis as JSON")
    p.add_argument("--strict", action="store_true", help="a bad line is an error (default: skipped, counted)")
    p.add_argument(
        "--loop-threshold",
        type=int,
        default=analysis.LOOP_THRESHOLD,
        metavar="N",
        help="same tool with the same arguments N times is a loop (default %(default)s)",
    )
    p.set_defaults(func=run)

    d = sub.add_parser(
        "analyze-dir",
        help="analyze every session of a directory, aggregated",
        description="Analyze every session of a directory in parallel (each session once: its trace-tier "
        ".jsonl, else its checkpoint .jsonl, else its ZIP) and aggregate: statuses and grades, failure "
        "stages, recovered runs, verification gaps, loops, tokens, tools, one row per session. Exit "
        "codes: 0 every run ended well, 1 a run with a finding or an unreadable file, 2 bad input (no "
        "such directory, a --markdown file that exists).",
    )
    d.add_argument("directory", help="the sessions directory")
    d.add_argument("--pattern", metavar="GLOB", help="file names to read (default: *.jsonl and *.zip)")
    d.add_argument("--recursive", "-r", action="store_true", help="look in subdirectories too")
    d.add_argument(
        "--markdown", metavar="OUT", help="write a shareable summary (no prompts, outputs or arguments)"
    )
    d.add_argument(
        "--jobs", "-j", type=int, default=None, metavar="N", help="processes (default: one per core)"
    )
    d.add_argument("--json", action="store_true", help="print the summary as JSON")
    d.add_argument(
        "--loop-threshold",
        type=int,
        default=analysis.LOOP_THRESHOLD,
        metavar="N",
        help="same tool with the same arguments N times is a loop (default %(default)s)",
    )
    d.set_defaults(func=run_dir)


def _print_json(value: Any, out: IO[str]) -> None:
    out.write(json_document(value))


def is_finding(result: dict[str, Any]) -> bool:
    """A run that failed, was cut short, or ended on failing tests or a limit."""
    return result["status"] != "ok" or result["failure"]["final_stage"] is not None


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    result = analysis.analyze_session(path, strict=args.strict, loop_threshold=args.loop_threshold)
    if args.json:
        _print_json(result, sys.stdout)
    else:
        render(result, sys.stdout)
    return 1 if is_finding(result) else 0


def _s(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value * 1000:.1f}ms" if value < 1 else f"{value:.2f}s"


def _table(
    out: IO[str], title: str, stats: dict[str, dict[str, Any]], cols: int, tokens: bool = False
) -> None:
    if not stats:
        return
    out.write(f"{title}:\n")
    name_width = min(max(len(clean(name)) for name in stats), 40)
    for name, stat in sorted(stats.items(), key=lambda item: -item[1]["total_s"])[:20]:
        line = (
            f"  {fit(name, name_width):<{name_width}}  {stat['count']:>6} calls  {stat['errors']:>4} errors  "
            f"total {_s(stat['total_s']):>9}  max {_s(stat['max_s']):>9}"
        )
        if tokens and "input_tokens" in stat:
            line += f"  tokens {stat['input_tokens']}→{stat['output_tokens']}"
        out.write(fit(line, cols) + "\n")
    if len(stats) > 20:
        out.write(f"  … {len(stats) - 20} more\n")


def render(result: dict[str, Any], out: IO[str]) -> None:
    """The analysis for a person: every value from the file cleaned and cut to the width."""
    cols = width(out)
    w = cols - 4
    counts, failure, recovery = result["counts"], result["failure"], result["recovery"]
    verification, health = result["verification"], result["health"]
    head = clean(result["session_id"] or result["path"])
    out.write(
        fit(f"{head}  [{result['tier'] or '?'} tier, format {result.get('format_version') or '?'}]", cols)
        + "\n"
    )
    state = result["status"] + ("" if result["complete"] else " (no session.end: killed, or still running)")
    out.write(
        f"status: {state}; {_s(result['duration_s'])}, {result['entries']} entries, "
        f"{result['files']} file(s)\n"
    )
    if result.get("events_evicted") is not None:
        out.write(
            f"evicted: DevDuck's ring of 10,000 events dropped the first {result['events_evicted']} events "
            "of this session, session.start among them\n"
        )
    out.write(
        f"spans: {counts['spans']} ({counts['model_calls']} model calls, {counts['tool_calls']} tool calls, "
        f"{counts['processes']} processes, {counts['http_requests']} HTTP); {counts['messages']} messages, "
        f"{counts['snapshots']} snapshots\n"
    )
    out.write(f"health: {health['grade']} ({health['score']})\n")
    for reason in health["reasons"]:
        out.write("  - " + fit(reason, w) + "\n")
    by_stage = ", ".join(f"{k} {v}" for k, v in failure["by_stage"].items()) or "none"
    out.write(
        f"failures: {failure['count']} ({by_stage}); primary stage {failure['primary_stage'] or 'none'}, "
        f"final stage {failure['final_stage'] or 'none'}\n"
    )
    if failure["first"]:
        first = failure["first"]
        out.write(
            fit(
                f"  first: {first['stage']} at {_s(first['at_s'])} in {clean(first['name'])} "
                f"[{clean(first['entry_id'])}]: {clean(first['reason'])}",
                cols,
            )
            + "\n"
        )
        later = "yes" if recovery["later_attempt_succeeded"] else "no"
        out.write(
            f"  recovery: a later attempt of a failed call succeeded: {later}; "
            f"run recovered: {'yes' if recovery['recovered'] else 'no'}\n"
        )
        if recovery["unrecovered"]:
            out.write(
                fit("  never succeeded after failing: " + ", ".join(recovery["unrecovered"]), cols) + "\n"
            )
    kinds = ", ".join(f"{k} {v['passed']}/{v['runs']} passed" for k, v in verification["by_kind"].items())
    out.write(f"verification: {verification['actions']} actions{' (' + kinds + ')' if kinds else ''}")
    if verification["gap"]:
        out.write(" — finished without testing, linting or running the work")
    out.write("\n")
    if verification["last"]:
        last = verification["last"]
        out.write(
            fit(
                f"  last: {last['kind']} {'passed' if last['passed'] else 'FAILED'}: "
                f"{clean(last['command'])}",
                cols,
            )
            + "\n"
        )
    if verification["writes_after_last_verification"]:
        out.write("  files were written after the last verification\n")
    if result["loops"]:
        out.write("loops (same tool, same arguments):\n")
        for loop in result["loops"][:10]:
            out.write(
                fit(
                    f"  {clean(loop['tool'])} ×{loop['count']} ({loop['failed']} failed, "
                    f"{loop['max_consecutive']} in a row) first at [{clean(loop['first_entry'])}]",
                    cols,
                )
                + "\n"
            )
    else:
        out.write("loops: none\n")
    tokens = result["tokens"]
    out.write(f"tokens: {tokens['input']} in, {tokens['output']} out, {tokens['cache_read']} cache read\n")
    latency = result["latency"]
    _table(out, "by model", latency["by_model"], cols, tokens=True)
    _table(out, "by tool", latency["by_tool"], cols)
    _table(out, "by layer", latency["by_layer"], cols)
    if result["slowest"]:
        out.write("slowest spans:\n")
        for span in result["slowest"]:
            out.write(
                fit(
                    f"  {_s(span['duration_s']):>9}  {clean(span['name'])} [{clean(span['layer'])}] "
                    f"{clean(span['entry_id'])}",
                    cols,
                )
                + "\n"
            )
    unfinished = result["unfinished"]
    out.write(f"unfinished spans: {unfinished['count'] or 'none'}\n")
    for span in unfinished["spans"][:10]:
        out.write(
            fit(
                f"  {clean(span['name'] or '…')} [{clean(span['layer'] or span['kind'])}] "
                f"started at {_s(span['started_at_s'])} "
                f"{clean(span['entry_id'])}",
                cols,
            )
            + "\n"
        )
    answer = result["final_answer"]
    if answer is None:
        out.write("final answer: none recorded\n")
    elif answer.get("text") is not None:
        out.write(fit("final answer: " + clean(answer["text"]), cols) + "\n")
    else:
        out.write(
            f"final answer: <{answer.get('chars')} chars, sha256 {clean(str(answer.get('sha256'))[:12])}…>\n"
        )
    if result["issue_count"]:
        out.write(f"unreadable lines: {result['issue_count']}\n")
        for issue in result["issues"][:5]:
            out.write("  " + fit(issue, w) + "\n")
    if "dm" in result:
        render_dm(result["dm"], out, cols)


def _yes(value: Any) -> str:
    return "yes" if value else "no"


def render_dm(dm: dict[str, Any], out: IO[str], cols: int) -> None:
    """DM-Code-Agent's own verdicts on its file, by its rules and with its names (what
    ``dm-agent-trace analyze`` says), after our checklist."""
    recovery, verification = dm["recovery"], dm["verification"]
    signals, health = dm["hallucination_signals"], dm["trace_health"]
    took = _s(dm["duration_seconds"]) if dm["duration_seconds"] is not None else "none recorded"
    lines = [
        "DM-Code-Agent's own analysis (its rules, its field names):",
        f"  task: {clean(dm['task'])}",
        f"  status: {clean(dm['status']) or '(no run_end)'}; duration_seconds (run_end): {took}",
        f"  primary failure stage: {clean(dm['primary_failure_stage'])}; "
        f"final failure stage: {clean(dm['final_failure_stage'])}",
        f"  recovery: failures={recovery['failure_event_count']}, replans={recovery['replan_count']}, "
        f"replanned_after_failure={_yes(recovery['replanned_after_failure'])}, "
        f"recovered={_yes(recovery['recovered'])}",
        f"  verification: actions={verification['count']}, "
        f"before_finish={_yes(verification['before_finish'])}, gap={_yes(verification['gap'])}",
        f"  hallucination signals: edit_without_read={signals['edit_without_read_count']}, "
        f"guard_blocks={signals['edit_guard_blocks']}, truncations={signals['truncation_hits']}, "
        f"missing_paths={signals['missing_path_reference_count']}",
        f"  trace health: {health['grade']} ({health['score']:.2f})"
        + (f"; issues: {', '.join(clean(i) for i in health['issues'])}" if health["issues"] else ""),
    ]
    for line in lines:
        out.write(fit(line, cols) + "\n")


# --- analyze-dir -------------------------------------------------------------------------------


def run_dir(args: argparse.Namespace) -> int:
    root = Path(args.directory)
    if not root.is_dir():
        raise FileNotFoundError(
            f"{root}: no such directory" if not root.exists() else f"{root}: not a directory"
        )
    paths = analysis.find_sessions(root, args.pattern, args.recursive)
    results = analysis.analyze_many(
        paths, jobs=args.jobs, loop_threshold=args.loop_threshold, progress=Progress("analyzing")
    )
    summary = analysis.aggregate(results, root)
    if args.markdown:
        text = analysis.directory_summary(summary, str(root)) + dm_section(summary)
        try:
            with open(args.markdown, "x", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:  # exists already (never overwritten), or cannot be created
            print(f"otel-agent-trace: {clean(args.markdown)}: {clean(exc.strerror or exc)}", file=sys.stderr)
            return 2
    if args.json:
        _print_json(summary, sys.stdout)
    else:
        render_dir(summary, str(root), sys.stdout)
        if args.markdown:
            sys.stdout.write(f"markdown summary written to {clean(args.markdown)}\n")
    findings = summary["unreadable"] or any(
        row["status"] != "ok" or row["final_stage"] is not None
        for row in summary["rows"]
        if "error" not in row
    )
    return 1 if findings else 0


def dm_section(summary: dict[str, Any]) -> str:
    """DM's own sections of the Markdown summary, after ours (none without DM files)."""
    text = dm_markdown(summary)
    return "\n" + text if text else ""


def render_dir(summary: dict[str, Any], directory: str, out: IO[str]) -> None:
    cols = width(out)
    out.write(
        fit(f"{directory}: {summary['sessions']} sessions ({summary['unreadable']} unreadable)", cols) + "\n"
    )
    if not summary["sessions"]:
        return
    out.write("health: " + ", ".join(f"{k} {v}" for k, v in summary["grades"].items()) + "\n")
    out.write("status: " + ", ".join(f"{k} {v}" for k, v in summary["status"].items()) + "\n")
    out.write(
        "primary failure stage: " + ", ".join(f"{k} {v}" for k, v in summary["primary_stage"].items()) + "\n"
    )
    out.write(
        "final failure stage: " + ", ".join(f"{k} {v}" for k, v in summary["final_stage"].items()) + "\n"
    )
    out.write(
        f"recovered: {summary['recovered']}; verification gaps: {summary['verification_gaps']}; "
        f"with loops: {summary['with_loops']}; with unfinished spans: {summary['with_unfinished_spans']}\n"
    )
    out.write(
        f"tokens: {summary['tokens']['input']} in, {summary['tokens']['output']} out; "
        f"total duration {_s(summary['duration_s'])}\n"
    )
    for name, tool in list(summary["tools"].items())[:10]:
        out.write(
            fit(
                f"  tool {clean(name)}: {tool['calls']} calls, {tool['errors']} errors, "
                f"in {tool['sessions']} sessions",
                cols,
            )
            + "\n"
        )
    dm = summary.get("dm")
    if dm:
        rate = dm["recovery_success_rate"]
        signals = dm["hallucination_signals"]
        for line in (
            f"DM-Code-Agent's own analysis of {dm['analyzed_traces']} DM files (its rules): "
            f"verification gaps {dm['verification_gap_count']}; recovery "
            f"{dm['recovered_runs']}/{dm['runs_with_failures']}"
            + (f" ({rate:.1%})" if rate is not None else ""),
            "  trace health: " + ", ".join(f"{k} {v}" for k, v in dm["trace_health_counts"].items()),
            "  final failure stages: "
            + ", ".join(f"{clean(k)} {v}" for k, v in dm["final_failure_stage_counts"].items()),
            f"  hallucination signals: edit_without_read={signals['edit_without_read_count']}, "
            f"guard_blocks={signals['edit_guard_blocks']}, truncations={signals['truncation_hits']}, "
            f"missing_paths={signals['missing_path_reference_count']}",
        ):
            out.write(fit(line, cols) + "\n")
    out.write("sessions:\n")
    for row in summary["rows"]:
        if "error" in row:
            out.write(fit(f"  {clean(row['file'])}  UNREADABLE: {clean(row['error'])}", cols) + "\n")
            continue
        stage = row["final_stage"] or row["primary_stage"] or "-"
        out.write(
            fit(
                f"  {clean(row['file'])}  {row['status']:<10} {row['grade']:<7} {row['score']:<4} "
                f"stage {stage:<12} {row['model_calls']:>4} model {row['tool_calls']:>4} tools "
                f"{_s(row['duration_s']):>8}",
                cols,
            )
            + "\n"
        )
        if row["bad_lines"]:  # read all the same, the bad lines skipped: said, with the first
            first = row.get("first_bad_line", "")
            out.write(
                fit(f"    skipped while reading: {row['bad_lines']} (first: {clean(first)})", cols) + "\n"
            )
