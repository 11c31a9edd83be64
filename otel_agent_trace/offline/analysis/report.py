"""Markdown: the report of one session (``report``) and the summary of a directory
(``analyze-dir --markdown``).

Every value from a file is made safe first: control characters escaped
(:func:`otel_agent_trace.offline.terminal.clean`), and the characters Markdown or HTML would
interpret in a table cell (``|``, ``<``, ``>``, backticks, brackets) escaped, so a span name
cannot inject markup or links. The directory summary holds identifiers, verdicts and counts
only: no prompts, outputs, tool arguments, failure messages or final answers.
"""

from __future__ import annotations

import re
import time
from typing import Any

from otel_agent_trace.offline.terminal import clean, fit

from ..jsonvalue import JSONValue
from .accumulator import Accumulator

_MD = re.compile(r"([\\|`\[\]*_])")
STEPS_SHOWN = 500


def md(value: Any, limit: int | None = 160) -> str:
    """A value for a Markdown table cell or line: one line, cut, markup escaped."""
    text = fit("" if value is None else value, limit)
    return _MD.sub(r"\\\1", text).replace("<", "&lt;").replace(">", "&gt;")


def _block(text: str) -> str:
    """Text in a fenced block that it cannot close, control characters escaped line by line."""
    lines = [clean(line) for line in text.splitlines()] or [""]
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + "text", *lines, fence])


def _seconds(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _answer(answer: dict[str, Any] | None) -> list[str]:
    if not answer:
        return ["_No final answer was recorded._"]
    if answer.get("text") is not None:
        return [_block(str(answer["text"]))]
    sha = str(answer.get("sha256") or "")[:16]
    return [
        f"_Not in this file (text kept as length and hash): {answer.get('chars')} characters, "
        f"sha256 `{md(sha)}…`._"
    ]


def session_report(result: dict[str, Any], acc: Accumulator) -> str:
    """The Markdown report of one session: run metadata, steps, final answer, failures."""
    meta = acc.metadata
    counts = result["counts"]
    tokens = result["tokens"]
    health = result["health"]
    out = [f"# Session report: {md(result['session_id'] or result['path'])}", ""]
    argv: JSONValue = meta.get("argv")
    rows = [
        ("file", result["path"]),
        ("status", f"{result['status']}{'' if result['complete'] else ' (no session.end)'}"),
        ("health", f"{health['grade']} ({health['score']})"),
        ("started", meta.get("start_time")),
        ("duration", _seconds(result["duration_s"])),
        ("tier", result["tier"]),
        ("format", " ".join(str(v) for v in (result.get("format"), result.get("format_version")) if v)),
        ("host", meta.get("hostname")),
        ("platform", meta.get("platform")),
        ("python", meta.get("python_version")),
        (
            "command",
            " ".join(str(a) for a in argv) if isinstance(argv, list) else None,
        ),
        ("working directory", meta.get("cwd")),
        ("model calls", counts["model_calls"]),
        ("tool calls", counts["tool_calls"]),
        ("processes", counts["processes"]),
        ("tokens", f"{tokens['input']} in, {tokens['output']} out"),
        ("entries", result["entries"]),
    ]
    out += ["| | |", "|---|---|"]
    out += [f"| {name} | {md(value, 300)} |" for name, value in rows if value not in (None, "")]
    out += ["", "## Final answer", "", *_answer(result["final_answer"]), ""]

    out += ["## Steps", ""]
    steps = sorted(acc.step_list, key=lambda step: (step["start_ts"], step["entry_id"]))
    if not steps:
        out += ["_No model or tool calls were recorded._", ""]
    else:
        start = acc.start_ts or acc.first_ts
        out += ["| # | at | kind | name | took | status | detail |", "|---|---|---|---|---|---|---|"]
        for number, step in enumerate(steps[:STEPS_SHOWN], 1):
            at = _seconds((step["start_ts"] - start) / 1e9) if step["start_ts"] and start else ""
            status = f"error: {md(step['error'], 120)}" if step["error"] else "ok"
            out.append(
                f"| {number} | {at} | {step['kind']} | {md(step['name'], 60)} "
                f"| {_seconds(step['duration_s'])} "
                f"| {status} | {md(step['detail'], 200)} |"
            )
        more = len(steps) - STEPS_SHOWN + acc.steps_dropped
        if more > 0:
            out.append(f"\n_… and {more} more steps (see `otel-agent-trace view`)._")
        out.append("")

    failure = result["failure"]
    out += ["## Failures", ""]
    if not failure["count"]:
        out += ["None.", ""]
    else:
        out.append(
            f"{failure['count']} failures; primary stage **{failure['primary_stage']}**, final stage "
            f"**{failure['final_stage'] or 'none'}**"
            f"{' (the run recovered)' if result['recovery']['recovered'] else ''}."
        )
        out += ["", "| at | stage | span | reason | later succeeded | entry |", "|---|---|---|---|---|---|"]
        for item in acc.failures:
            d = item.to_dict(acc.start_ts or acc.first_ts)
            out.append(
                f"| {_seconds(d['at_s'])} | {d['stage']} | {md(d['name'], 60)} | {md(d['reason'], 200)} "
                f"| {'yes' if d['recovered'] else 'no'} | {md(d['entry_id'])} |"
            )
        if failure["count"] > len(acc.failures):
            out.append(f"\n_… and {failure['count'] - len(acc.failures)} more._")
        out.append("")

    verification = result["verification"]
    out += ["## Verification", ""]
    if not verification["actions"]:
        out.append("No test, lint or run of the work was recorded.")
    else:
        kinds = ", ".join(f"{k} {v['passed']}/{v['runs']} passed" for k, v in verification["by_kind"].items())
        last = verification["last"]
        out.append(
            f"{verification['actions']} actions ({kinds}); the last one ({last['kind']}) "
            f"{'passed' if last['passed'] else 'failed'}: `{md(last['command'], 200)}`."
        )
        if verification["writes_after_last_verification"]:
            out.append("\nFiles were written after the last verification.")
    out += ["", "## Health", "", f"**{health['grade']}** ({health['score']})", ""]
    out += [f"- {md(reason, 300)}" for reason in health["reasons"]] or ["- no findings"]
    if result["issue_count"]:
        out += ["", f"{result['issue_count']} lines of the file could not be read:", ""]
        out += [f"- {md(issue, 300)}" for issue in result["issues"]]
    return "\n".join(out) + "\n"


def directory_summary(summary: dict[str, Any], directory: str) -> str:
    """The shareable Markdown of ``analyze-dir``: identifiers, verdicts and counts only."""
    out = [
        f"# Session analysis: {md(directory)}",
        "",
        f"_Written {time.strftime('%Y-%m-%d %H:%M:%S %z')}._",
        "",
    ]
    out += [
        f"- sessions: {summary['sessions']} ({summary['analysed']} analysed, "
        f"{summary['unreadable']} unreadable)",
        "- health: " + ", ".join(f"{k} {v}" for k, v in summary["grades"].items()),
        "- status: " + ", ".join(f"{k} {v}" for k, v in summary["status"].items()),
        "- primary failure stage: " + ", ".join(f"{k} {v}" for k, v in summary["primary_stage"].items()),
        "- final failure stage: " + ", ".join(f"{k} {v}" for k, v in summary["final_stage"].items()),
        f"- recovered after a failure: {summary['recovered']}",
        "- verification gaps (finished without testing, linting or running the work): "
        f"{summary['verification_gaps']}",
        f"- with tool loops: {summary['with_loops']}",
        f"- with unfinished spans: {summary['with_unfinished_spans']}",
        f"- tokens: {summary['tokens']['input']} in, {summary['tokens']['output']} out",
        f"- total duration: {_seconds(summary['duration_s'])}",
        "",
    ]
    if summary["models"]:
        out += [
            "## Models",
            "",
            "| model | calls | errors | tokens in | tokens out |",
            "|---|---|---|---|---|",
        ]
        for name, m in summary["models"].items():
            out.append(
                f"| {md(name, 80)} | {m['calls']} | {m['errors']} | {m['input_tokens']} "
                f"| {m['output_tokens']} |"
            )
        out.append("")
    if summary["tools"]:
        out += ["## Tools", "", "| tool | calls | errors | sessions |", "|---|---|---|---|"]
        for name, t in list(summary["tools"].items())[:50]:
            out.append(f"| {md(name, 80)} | {t['calls']} | {t['errors']} | {t['sessions']} |")
        out.append("")
    out += [
        "## Sessions",
        "",
        "| file | status | health | primary | final | failures | model calls | tool calls | tokens in/out "
        "| verified | loops | unfinished | duration |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        if "error" in r:
            out.append(f"| {md(r['file'], 100)} | unreadable | | | | | | | | | | | |")
            continue
        out.append(
            f"| {md(r['file'], 100)} | {r['status']} | {r['grade']} ({r['score']}) "
            f"| {r['primary_stage'] or ''} "
            f"| {r['final_stage'] or ''} | {r['failures']} | {r['model_calls']} | {r['tool_calls']} "
            f"| {r['input_tokens']}/{r['output_tokens']} "
            f"| {'no' if r['verification_gap'] else r['verifications']} "
            f"| {r['loops']} | {r['unfinished']} | {_seconds(r['duration_s'])} |"
        )
    return "\n".join(out) + "\n"
