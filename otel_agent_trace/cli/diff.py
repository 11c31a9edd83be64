"""``otel-agent-trace diff A B``: two runs compared — status, final answer, model and tool-call
counts, tokens and duration deltas, the tool-call sequences aligned by longest common
subsequence, and per-tool usage deltas. Reads files only.

Exit codes: 0 the runs do the same thing; 1 they differ; 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from otel_agent_trace.offline import analysis
from otel_agent_trace.offline.terminal import clean, fit, json_document, width


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two runs",
        description="Compare two runs: status, final failure stage, final answer (as text: values that "
        "change from run to run, such as timings and random ids, are not a change), counts, tokens, "
        "duration, and the tool calls aligned. Exit 0 when they are the same, 1 when they differ, 2 for "
        "bad input.",
    )
    p.add_argument("base", help="the baseline session (.jsonl or .zip)")
    p.add_argument("candidate", help="the session to compare with it")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--strict", action="store_true", help="a bad line is an error (default: skipped)")
    p.add_argument(
        "--html",
        metavar="OUT",
        help="also write both runs to OUT as one self-contained HTML page: this comparison with the tool "
        "calls aligned side by side, each run's timeline and conversation (a new file: never overwritten)",
    )
    p.set_defaults(func=run)


def write_page(target: Path, write: Callable[[Path], Path]) -> int:
    """Write a page to ``target``, a new file (one that exists is refused, as ``view --html``,
    ``report -o``, ``fork`` and ``export`` refuse); bad input leaves no page. 0, or 2 (refused)."""
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except FileExistsError:
        print(f"otel-agent-trace: {clean(target)} exists: --html never overwrites a file", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"otel-agent-trace: {clean(target)}: {clean(exc.strerror or exc)}", file=sys.stderr)
        return 2
    try:
        write(target)  # written beside it, then renamed over the empty file
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return 0


def run(args: argparse.Namespace) -> int:
    for name in (args.base, args.candidate):
        if not Path(name).exists():
            raise FileNotFoundError(f"{name}: no such session file")
    if args.html:  # the runs analysed once: for the page and for what is printed
        from otel_agent_trace.offline.html import comparison, write_compare_html

        target = Path(args.html)
        if os.path.lexists(target):  # refused before the runs are read
            return write_page(target, lambda out: out)
        compared = comparison(args.base, args.candidate, strict=args.strict)
        refused = write_page(  # bad lines skipped, as diff skips them (unless --strict)
            target,
            lambda out: write_compare_html(args.base, args.candidate, out, compared, lenient=not args.strict),
        )
        if refused:
            return refused
        result = {k: v for k, v in compared.items() if k not in ("aligned", "aligned_rows")}
    else:
        result = analysis.compare(args.base, args.candidate, strict=args.strict)
    if args.json:
        if args.html:
            result = {**result, "html": str(args.html)}
        sys.stdout.write(json_document(result))
    else:
        render(result, sys.stdout)
        if args.html:
            print(f"wrote {clean(args.html)}")
    return 1 if result["different"] else 0


def _answer(answer: dict[str, Any] | None) -> str:
    if not answer:
        return "none"
    if answer.get("text") is not None:
        return clean(answer["text"])
    return f"<{answer.get('chars')} chars, sha256 {clean(str(answer.get('sha256'))[:12])}…>"


def render(result: dict[str, Any], out: IO[str]) -> None:
    cols = width(out)
    out.write(fit(f"base:      {clean(result['base'])}", cols) + "\n")
    out.write(fit(f"candidate: {clean(result['candidate'])}", cols) + "\n")
    status, stage, health = result["status"], result["final_stage"], result["health"]
    mark = " (changed)" if result["status_changed"] else ""
    out.write(
        f"status: {status['base']} → {status['candidate']}{mark}; final failure stage "
        f"{stage['base'] or 'none'} → {stage['candidate'] or 'none'}; health {health['base']} → "
        f"{health['candidate']}\n"
    )
    if result["final_answer_changed"]:
        out.write("final answer: changed\n")
        out.write(fit("  base:      " + _answer(result["final_answer"]["base"]), cols) + "\n")
        out.write(fit("  candidate: " + _answer(result["final_answer"]["candidate"]), cols) + "\n")
    else:
        out.write("final answer: same\n")
    out.write("metrics (base → candidate, delta):\n")
    for name, m in result["metrics"].items():
        delta = m["delta"]
        sign = "+" if delta > 0 else ""
        out.write(f"  {name:<14} {m['base']} → {m['candidate']} ({sign}{delta})\n")
    seq = result["action_sequence"]
    exact = "" if seq["exact_lcs"] else " (long sequences: approximate alignment)"
    out.write(
        f"tool calls: {seq['base_length']} → {seq['candidate_length']}; "
        f"common prefix {seq['common_prefix']}, "
        f"{seq['common']} in common, {seq['change_count']} changes{exact}\n"
    )
    for change in seq["changes"][:30]:
        base = ", ".join(clean(a) for a in change["base"]) or "-"
        cand = ", ".join(clean(a) for a in change["candidate"]) or "-"
        out.write(
            fit(
                f"  {change['op']:<7} at {change['base_index']}/{change['candidate_index']}: "
                f"[{base}] → [{cand}]",
                cols,
            )
            + "\n"
        )
    if seq["change_count"] > 30:
        out.write(f"  … {seq['change_count'] - 30} more\n")
    usage = result["tool_usage"]["delta"]
    if usage:
        out.write("tool usage:\n")
        for tool, u in usage.items():
            sign = "+" if u["delta"] > 0 else ""
            out.write(
                fit(f"  {clean(tool)}: {u['base']} → {u['candidate']} ({sign}{u['delta']})", cols) + "\n"
            )
    out.write("different\n" if result["different"] else "same\n")
