"""Every session of a directory analysed in parallel (processes, one per core) and aggregated.

A session is counted once: its trace-tier ``.jsonl`` (with its child files), else its
checkpoint-tier ``.jsonl``, else its ZIP. Child-process files (``<session>.p<pid>.jsonl``) are
part of their parent's session, never sessions of their own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt

from .checks import LOOP_THRESHOLD, analyze
from .summary import summarize

_CHILD = re.compile(r"\.p\d+(\.checkpoint)?\.jsonl$")
_RANK = {".jsonl": 0, ".checkpoint.jsonl": 1, ".zip": 2, ".checkpoint.zip": 3}


def _suffix(name: str) -> str | None:
    for suffix in (".checkpoint.jsonl", ".checkpoint.zip", ".jsonl", ".zip"):
        if name.endswith(suffix):
            return suffix
    return None


def find_sessions(directory: Path, pattern: str | None = None, recursive: bool = False) -> list[Path]:
    """The session files under ``directory``, one per session, sorted by path.

    ``pattern`` is a glob on file names (default: every ``.jsonl`` and ``.zip``). Symlinks to
    files are followed, dangling ones and anything not a regular file (a FIFO) skipped.
    """
    globs = [pattern] if pattern else ["*.jsonl", "*.zip"]
    chosen: dict[tuple[Path, str], tuple[int, Path]] = {}
    for glob in globs:
        found = directory.rglob(glob) if recursive else directory.glob(glob)
        for path in found:
            name = path.name
            suffix = _suffix(name)
            if _CHILD.search(name):
                continue
            try:
                if not path.is_file():
                    continue
            except OSError:
                continue
            stem = name[: -len(suffix)] if suffix else name
            rank = _RANK.get(suffix or "", 4)
            key = (path.parent, stem)
            if key not in chosen or rank < chosen[key][0]:
                chosen[key] = (rank, path)
    return sorted(path for _, path in chosen.values())


def _children(paths: list[Path]) -> dict[Path, list[Path]]:
    """The child-process files of each JSONL session, each directory listed once (looking them
    up session by session would list a directory of N sessions N times)."""
    by_dir: dict[Path, dict[tuple[str, bool], list[Path]]] = {}
    out: dict[Path, list[Path]] = {}
    for path in paths:
        suffix = _suffix(path.name)
        if suffix not in (".jsonl", ".checkpoint.jsonl"):
            continue
        if path.parent not in by_dir:
            found: dict[tuple[str, bool], list[Path]] = {}
            try:
                names = sorted(entry.name for entry in os.scandir(path.parent))
            except OSError:
                names = []
            for name in names:
                match = _CHILD.search(name)
                if match:
                    stem = name[: match.start()]
                    found.setdefault((stem, bool(match.group(1))), []).append(path.parent / name)
            by_dir[path.parent] = found
        stem = path.name[: -len(suffix)]
        out[path] = by_dir[path.parent].get((stem, suffix == ".checkpoint.jsonl"), [])
    return out


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
    children = _children(paths)
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
    }


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
    }
