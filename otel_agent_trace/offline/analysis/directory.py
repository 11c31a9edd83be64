"""Every session of a directory analysed in parallel (processes, one per core) and aggregated.

Which files are sessions: :mod:`.session_files`.

DM-Code-Agent files also get DM's own directory summary (:func:`dm_summary`, ``dm`` in the
aggregate; its Markdown sections from :func:`dm_markdown`): files analysed, errors, verification
gaps, runs with failures, recovered runs and the recovery rate, the hallucination signals summed,
counts by DM's health grade and by primary and final stage, and a row per trace — DM's fields with
DM's meaning (``dm-agent-trace analyze-dir``), beside ours.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt

from .checks import LOOP_THRESHOLD, analyze
from .session_files import child_files
from .summary import summarize


def _one(job: tuple[str, list[Path] | None, int]) -> dict[str, Any]:
    """Analyse one session in a worker process; errors become a row, never an exception."""
    path, children, loop_threshold = job
    try:
        acc, issues = summarize(path, children=children)
        result = analyze(acc, issues, path=path, loop_threshold=loop_threshold)
    except (fmt.SessionFormatError, OSError) as exc:
        return {"path": path, "error": str(exc)}
    if result["issues"]:  # lines skipped: the file is named with the first (file, line, reason)
        result["first_issue"] = result["issues"][0]
    for key in _NOT_AGGREGATED:  # less to send back; and no content leaves the worker
        result.pop(key, None)
    result["unfinished"]["spans"] = []
    if "dm" in result:
        result["dm"].pop("task", None)  # the user's prompt: content
    return result


_NOT_AGGREGATED = ("slowest", "issues", "final_answer", "argv")


def analyze_many(
    paths: list[Path],
    *,
    jobs: int | None = None,
    loop_threshold: int = LOOP_THRESHOLD,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Analyse ``paths`` with ``jobs`` processes (default: one per core), results in path order:
    each session's analysis without its content (final answer, command line, read issues,
    slowest and unfinished span names), or ``{"path", "error"}``."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    children = child_files(paths)
    work = [(str(path), children.get(path), loop_threshold) for path in paths]
    results: list[dict[str, Any]] = []

    def collect(found: Iterator[dict[str, Any]]) -> None:
        for result in found:
            results.append(result)
            if progress is not None:
                progress(len(results), len(work))

    if jobs == 1 or len(work) < 2:
        collect(map(_one, work))
    else:
        chunk = max(1, min(32, len(work) // (jobs * 4)))
        with ProcessPoolExecutor(max_workers=min(jobs, len(work))) as pool:
            collect(pool.map(_one, work, chunksize=chunk))
    return results


def _add(counter: dict[str, int], key: Any, n: int = 1) -> None:
    key = "none" if key is None else str(key)
    counter[key] = counter.get(key, 0) + n


def row(result: dict[str, Any], root: Path) -> dict[str, Any]:
    """One session in a directory summary: identifiers, verdicts and counts, no content."""
    try:
        name = str(Path(result["path"]).relative_to(root))
    except ValueError:
        name = result["path"]
    if "error" in result:
        return {"file": name, "error": result["error"]}
    tokens = result["tokens"]
    return {
        "file": name,
        "session_id": result["session_id"],
        "status": result["status"],
        "grade": result["health"]["grade"],
        "score": result["health"]["score"],
        "primary_stage": result["failure"]["primary_stage"],
        "final_stage": result["failure"]["final_stage"],
        "failures": result["failure"]["count"],
        "duration_s": result["duration_s"],
        "model_calls": result["counts"]["model_calls"],
        "tool_calls": result["counts"]["tool_calls"],
        "input_tokens": tokens["input"],
        "output_tokens": tokens["output"],
        "verifications": result["verification"]["actions"],
        "verification_gap": result["verification"]["gap"],
        "loops": len(result["loops"]),
        "unfinished": result["unfinished"]["count"],
        "bad_lines": result.get("issue_count", 0),
        **({"first_bad_line": result["first_issue"]} if "first_issue" in result else {}),
        **({"dm": _dm_row(result["dm"])} if "dm" in result else {}),
    }


def _dm_row(verdicts: dict[str, Any]) -> dict[str, Any]:
    """A DM-Code-Agent file's row of DM's table: its verdicts, no content."""
    health = verdicts["trace_health"]
    return {
        "status": verdicts["status"],
        "grade": health["grade"],
        "score": health["score"],
        "primary_failure_stage": verdicts["primary_failure_stage"],
        "final_failure_stage": verdicts["final_failure_stage"],
        "verification_gap": verdicts["verification"]["gap"],
        "replan_count": verdicts["recovery"]["replan_count"],
    }


DM_SIGNALS = (
    "edit_without_read_count",
    "edit_guard_blocks",
    "truncation_hits",
    "missing_path_reference_count",
)


def dm_summary(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """DM's ``analyze-dir`` summary of the DM-Code-Agent files among ``results`` (``None`` when
    there are none): counts and rates by DM's rules, with DM's field names. Unreadable files are
    its errors (their format unknown)."""
    verdicts = [r["dm"] for r in results if "dm" in r]
    if not verdicts:
        return None
    errors = sum(1 for r in results if "error" in r)
    failed = [v for v in verdicts if v["recovery"]["failure_event_count"]]
    recovered = [v for v in failed if v["recovery"]["recovered"]]
    grades: dict[str, int] = {}
    primary: dict[str, int] = {}
    final: dict[str, int] = {}
    for v in verdicts:
        _add(grades, v["trace_health"]["grade"] or "unknown")
        _add(primary, v["primary_failure_stage"] or "none")
        _add(final, v["final_failure_stage"] or "none")
    return {
        "total_files": len(verdicts) + errors,
        "analyzed_traces": len(verdicts),
        "error_count": errors,
        "verification_gap_count": sum(1 for v in verdicts if v["verification"]["gap"]),
        "runs_with_failures": len(failed),
        "recovered_runs": len(recovered),
        "recovery_success_rate": len(recovered) / len(failed) if failed else None,
        "hallucination_signals": {
            key: sum(int(v["hallucination_signals"].get(key) or 0) for v in verdicts) for key in DM_SIGNALS
        },
        "trace_health_counts": dict(sorted(grades.items())),
        "primary_failure_stage_counts": dict(sorted(primary.items())),
        "final_failure_stage_counts": dict(sorted(final.items())),
    }


def _code(value: Any) -> str:
    """A value in a Markdown code span (backticks and line breaks out: a file's text)."""
    return "`" + " ".join(str(value).replace("`", "'").split())[:200] + "`"


def dm_markdown(summary: dict[str, Any]) -> str:
    """DM's sections of an ``analyze-dir --markdown`` report (empty without DM files): its health
    counts, recovery rate and hallucination signals, final stages and a table per trace —
    verdicts and counts only, no prompt, observation or answer."""
    dm = summary.get("dm")
    if not dm:
        return ""
    signals = dm["hallucination_signals"]
    rate = dm["recovery_success_rate"]
    analysed = f"{dm['analyzed_traces']}/{dm['total_files']}"
    recovered = f"{dm['recovered_runs']}/{dm['runs_with_failures']}"
    out = [
        "## DM-Code-Agent trace analysis",
        "",
        "_DM-Code-Agent's own verdicts, by its rules (`dm-agent-trace analyze-dir`), for the DM files._",
        "",
        f"- Traces analyzed: {_code(analysed)}",
        f"- Errors: {_code(dm['error_count'])}",
        f"- Verification gaps: {_code(dm['verification_gap_count'])}",
        "",
        "### Trace Health",
        "",
        *(f"- {_code(grade)}: {_code(n)}" for grade, n in dm["trace_health_counts"].items()),
        "",
        "### Recovery & Hallucination Signals",
        "",
        (
            f"- Recovery success rate: {_code(f'{rate:.1%}')} ({_code(recovered)})"
            if rate is not None
            else "- Recovery success rate: `n/a` (no runs with failures)"
        ),
        f"- Edits without a prior read: {_code(signals['edit_without_read_count'])}",
        f"- Edit-guard blocks: {_code(signals['edit_guard_blocks'])}",
        f"- Truncated observations: {_code(signals['truncation_hits'])}",
        f"- Missing-path references: {_code(signals['missing_path_reference_count'])}",
        "",
        "### Primary Failure Stages",
        "",
        *(f"- {_code(stage)}: {_code(n)}" for stage, n in dm["primary_failure_stage_counts"].items()),
        "",
        "### Final Failure Stages",
        "",
        *(f"- {_code(stage)}: {_code(n)}" for stage, n in dm["final_failure_stage_counts"].items()),
        "",
        "### Trace Details",
        "",
        "| Trace | Status | Health | Final failure | Verification gap | Replans |",
        "| --- | --- | --- | --- | ---: | ---: |",
    ]
    for r in summary["rows"]:
        v = r.get("dm")
        if v is None:
            continue
        out.append(
            f"| {_code(r['file'])} | {_code(v['status'])} | {_code(v['grade'])} ({v['score']}) "
            f"| {_code(v['final_failure_stage'])} | {'yes' if v['verification_gap'] else 'no'} "
            f"| {int(v['replan_count'] or 0)} |"
        )
    return "\n".join(out) + "\n"


def aggregate(results: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """Totals over many sessions: grades, statuses, failure stages, verification, tokens, tools."""
    rows = [row(result, root) for result in results]
    good = [result for result in results if "error" not in result]
    status: dict[str, int] = {}
    grades: dict[str, int] = {"good": 0, "warning": 0, "risky": 0}
    primary: dict[str, int] = {}
    final: dict[str, int] = {}
    models: dict[str, dict[str, int]] = {}
    tools: dict[str, dict[str, int]] = {}
    for result in good:
        _add(status, result["status"])
        _add(grades, result["health"]["grade"])
        _add(primary, result["failure"]["primary_stage"])
        _add(final, result["failure"]["final_stage"])
        for name, stat in result["tokens"]["by_model"].items():
            total = models.setdefault(name, {"calls": 0, "errors": 0, "input_tokens": 0, "output_tokens": 0})
            total["calls"] += stat["count"]
            total["errors"] += stat["errors"]
            total["input_tokens"] += stat.get("input_tokens", 0)
            total["output_tokens"] += stat.get("output_tokens", 0)
        for name, stat in result["latency"]["by_tool"].items():
            total = tools.setdefault(name, {"calls": 0, "errors": 0, "sessions": 0})
            total["calls"] += stat["count"]
            total["errors"] += stat["errors"]
            total["sessions"] += 1
    return {
        "sessions": len(results),
        "analysed": len(good),
        "unreadable": len(results) - len(good),
        "status": dict(sorted(status.items())),
        "grades": grades,
        "primary_stage": dict(sorted(primary.items())),
        "final_stage": dict(sorted(final.items())),
        "recovered": sum(1 for r in good if r["recovery"]["recovered"]),
        "verification_gaps": sum(1 for r in good if r["verification"]["gap"]),
        "with_loops": sum(1 for r in good if r["loops"]),
        "with_unfinished_spans": sum(1 for r in good if r["unfinished"]["count"]),
        "duration_s": round(sum(r["duration_s"] or 0 for r in good), 3),  # the known ones
        "tokens": {
            "input": sum(r["tokens"]["input"] for r in good),
            "output": sum(r["tokens"]["output"] for r in good),
        },
        "models": dict(sorted(models.items())),
        "tools": dict(sorted(tools.items(), key=lambda item: -item[1]["calls"])),
        "rows": rows,
        **({"dm": dm} if (dm := dm_summary(results)) is not None else {}),
    }
