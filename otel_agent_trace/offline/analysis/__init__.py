"""Offline analysis of recorded sessions: the review checklist of one run (``analyze``), many
runs at once (``analyze_dir``), two runs compared (``diff``) and a Markdown report.

Each reads a session in one streaming pass (:func:`.summary.summarize`), so memory stays bounded
whatever the file's size. Nothing here runs a model, a tool or anything read from a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .accumulator import Accumulator
from .checks import LOOP_THRESHOLD, analyze
from .diff import diff
from .directory import aggregate, analyze_many
from .report import directory_summary, session_report
from .session_files import find_sessions
from .summary import summarize


def analyze_session(
    path: str | os.PathLike[str], *, strict: bool = False, loop_threshold: int = LOOP_THRESHOLD
) -> dict[str, Any]:
    """The review checklist of one session file (JSONL with its child files, or ZIP)."""
    acc, issues = summarize(path, strict=strict)
    return analyze(acc, issues, path=str(path), loop_threshold=loop_threshold)


def analyze_dir(
    directory: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    recursive: bool = False,
    jobs: int | None = None,
    loop_threshold: int = LOOP_THRESHOLD,
) -> dict[str, Any]:
    """Every session of ``directory`` analysed (in parallel) and aggregated."""
    root = Path(directory)
    paths = find_sessions(root, pattern, recursive)
    return aggregate(analyze_many(paths, jobs=jobs, loop_threshold=loop_threshold), root)


def compare(
    base: str | os.PathLike[str], candidate: str | os.PathLike[str], *, strict: bool = False
) -> dict[str, Any]:
    """Two sessions compared (``diff``): statuses, answers, counts, aligned tool sequences."""
    acc_a, issues_a = summarize(base, actions=True, strict=strict)
    acc_b, issues_b = summarize(candidate, actions=True, strict=strict)
    return diff(
        analyze(acc_a, issues_a, path=str(base)),
        analyze(acc_b, issues_b, path=str(candidate)),
        acc_a.action_list,
        acc_b.action_list,
    )


def report(path: str | os.PathLike[str], *, strict: bool = False, steps: int = 1000) -> str:
    """The Markdown report of one session."""
    acc, issues = summarize(path, steps=steps, strict=strict)
    return session_report(analyze(acc, issues, path=str(path)), acc)


__all__ = [
    "LOOP_THRESHOLD",
    "Accumulator",
    "aggregate",
    "analyze",
    "analyze_dir",
    "analyze_many",
    "analyze_session",
    "compare",
    "diff",
    "directory_summary",
    "find_sessions",
    "report",
    "session_report",
    "summarize",
]
