"""Two runs on one page: what ``diff`` finds (:mod:`otel_agent_trace.offline.analysis.diff`), and
its alignment of the two runs' tool calls row by row, each call named by its span's entry id so the
page links it to the span."""

from __future__ import annotations

import itertools
import os
from typing import Any

from otel_agent_trace.offline.analysis import analyze, diff, summarize
from otel_agent_trace.offline.analysis.diff import lcs_opcodes

MAX_ALIGNED = 5_000  # rows of the aligned tool calls on the page; the rest counted
MAX_STEPS = 20_000  # tool and model calls whose span entry is looked up


def _cut(text: Any, limit: int = 1_000) -> Any:
    return text[:limit] + "…" if isinstance(text, str) and len(text) > limit else text


def _step(steps: list[dict[str, Any]], index: int | None, tools: list[str]) -> dict[str, Any] | None:
    if index is None:
        return None
    step = steps[index] if index < len(steps) else {}
    return {
        "index": index,
        "tool": _cut(tools[index]),
        "entry": step.get("entry_id") or None,
        "error": _cut(step.get("error")),
        "duration_s": step.get("duration_s"),
        "detail": _cut(step.get("detail")) or None,  # its arguments and result, previewed
    }


def comparison(
    base: str | os.PathLike[str], candidate: str | os.PathLike[str], *, strict: bool = False
) -> dict[str, Any]:
    """``diff``'s result for the two runs (:func:`otel_agent_trace.offline.analysis.compare`'s),
    with ``aligned``: one row per tool call of either run (``op`` equal, replace, delete or
    insert, and the call of each side) and ``aligned_rows``, how many rows there are in all."""
    acc_a, issues_a = summarize(base, actions=True, steps=MAX_STEPS, strict=strict)
    acc_b, issues_b = summarize(candidate, actions=True, steps=MAX_STEPS, strict=strict)
    tools_a, tools_b = acc_a.action_list, acc_b.action_list
    result = diff(
        analyze(acc_a, issues_a, path=str(base)),
        analyze(acc_b, issues_b, path=str(candidate)),
        tools_a,
        tools_b,
    )
    steps_a = [s for s in acc_a.step_list if s.get("kind") == "tool"]
    steps_b = [s for s in acc_b.step_list if s.get("kind") == "tool"]
    ops, _ = lcs_opcodes(tools_a, tools_b)
    aligned: list[dict[str, Any]] = []
    rows = 0
    for tag, i1, i2, j1, j2 in ops:
        for i, j in itertools.zip_longest(range(i1, i2), range(j1, j2)):
            rows += 1
            if len(aligned) < MAX_ALIGNED:
                aligned.append({"op": tag, "a": _step(steps_a, i, tools_a), "b": _step(steps_b, j, tools_b)})
    result["aligned"] = aligned
    result["aligned_rows"] = rows
    return result
