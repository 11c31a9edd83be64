"""Two runs compared: status, final answer, counts, tokens and duration deltas, the sequences of
tool calls aligned by longest common subsequence (one inserted step is one change, not a shift of
every later step), and per-tool usage deltas.
"""

from __future__ import annotations

import difflib
from array import array
from typing import Any

# Above this many cells the exact LCS table is not built; difflib's matcher aligns instead.
LCS_CELLS = 4_000_000


def lcs_opcodes(a: list[str], b: list[str]) -> tuple[list[tuple[str, int, int, int, int]], bool]:
    """``(opcodes, exact)``: difflib-style ``(tag, i1, i2, j1, j2)`` from a longest common
    subsequence of ``a`` and ``b`` (``exact`` False when the sequences were too long for it)."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : n - tail], b[head : m - tail]
    if len(mid_a) * len(mid_b) > LCS_CELLS:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        return [tuple(op) for op in matcher.get_opcodes()], False  # type: ignore[misc]
    pairs = _lcs_pairs(mid_a, mid_b)
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    i = j = 0
    for pi, pj in [*pairs, (len(mid_a), len(mid_b))]:
        if pi > i or pj > j:
            tag = "replace" if pi > i and pj > j else "delete" if pi > i else "insert"
            ops.append((tag, head + i, head + pi, head + j, head + pj))
        if pi < len(mid_a):
            if ops and ops[-1][0] == "equal" and ops[-1][2] == head + pi:
                last = ops[-1]
                ops[-1] = ("equal", last[1], head + pi + 1, last[3], head + pj + 1)
            else:
                ops.append(("equal", head + pi, head + pi + 1, head + pj, head + pj + 1))
        i, j = pi + 1, pj + 1
    if tail:
        if ops and ops[-1][0] == "equal" and ops[-1][2] == n - tail:
            last = ops[-1]
            ops[-1] = ("equal", last[1], n, last[3], m)
        else:
            ops.append(("equal", n - tail, n, m - tail, m))
    return ops, True


def _lcs_pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence (dynamic programming, suffix table)."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    width = m + 1
    table = array("l", bytes(8 * (n + 1) * width)) if (n + 1) * width else array("l")
    for i in range(n - 1, -1, -1):
        row, below = i * width, (i + 1) * width
        ai = a[i]
        for j in range(m - 1, -1, -1):
            if ai == b[j]:
                table[row + j] = table[below + j + 1] + 1
            else:
                down, right = table[below + j], table[row + j + 1]
                table[row + j] = down if down >= right else right
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif table[(i + 1) * width + j] >= table[i * width + j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _delta(base: float, candidate: float) -> dict[str, Any]:
    delta = candidate - base
    return {
        "base": base,
        "candidate": candidate,
        "delta": round(delta, 6) if isinstance(delta, float) else delta,
    }


def _answer_key(answer: dict[str, Any] | None) -> str | None:
    if not answer:
        return None
    return answer.get("sha256") or (answer.get("text") if answer.get("text") is not None else None)


def diff(
    base: dict[str, Any], candidate: dict[str, Any], base_actions: list[str], cand_actions: list[str]
) -> dict[str, Any]:
    """Compare two analysed sessions (``checks.analyze`` results) and their tool sequences."""
    ops, exact = lcs_opcodes(base_actions, cand_actions)
    prefix = ops[0][2] if ops and ops[0][0] == "equal" and ops[0][1] == 0 else 0
    changes = [
        {
            "op": tag,
            "base_index": i1,
            "candidate_index": j1,
            "base": base_actions[i1:i2][:50],
            "candidate": cand_actions[j1:j2][:50],
        }
        for tag, i1, i2, j1, j2 in ops
        if tag != "equal"
    ]
    common = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
    usage: dict[str, dict[str, Any]] = {}
    tools = sorted(set(base["latency"]["by_tool"]) | set(candidate["latency"]["by_tool"]))
    for tool in tools:
        b = base["latency"]["by_tool"].get(tool, {}).get("count", 0)
        c = candidate["latency"]["by_tool"].get(tool, {}).get("count", 0)
        if b != c:
            usage[tool] = {"base": b, "candidate": c, "delta": c - b}
    metrics = {
        "model_calls": _delta(base["counts"]["model_calls"], candidate["counts"]["model_calls"]),
        "tool_calls": _delta(base["counts"]["tool_calls"], candidate["counts"]["tool_calls"]),
        "failures": _delta(base["failure"]["count"], candidate["failure"]["count"]),
        "input_tokens": _delta(base["tokens"]["input"], candidate["tokens"]["input"]),
        "output_tokens": _delta(base["tokens"]["output"], candidate["tokens"]["output"]),
        "health_score": _delta(base["health"]["score"], candidate["health"]["score"]),
    }
    if base["duration_s"] is not None and candidate["duration_s"] is not None:  # else time unknown
        metrics = {"duration_s": _delta(base["duration_s"], candidate["duration_s"]), **metrics}
    base_answer, cand_answer = _answer_key(base["final_answer"]), _answer_key(candidate["final_answer"])
    result: dict[str, Any] = {
        "base": base["path"],
        "candidate": candidate["path"],
        "status": {"base": base["status"], "candidate": candidate["status"]},
        "status_changed": base["status"] != candidate["status"],
        "final_stage": {
            "base": base["failure"]["final_stage"],
            "candidate": candidate["failure"]["final_stage"],
        },
        "health": {"base": base["health"]["grade"], "candidate": candidate["health"]["grade"]},
        "final_answer_changed": base_answer != cand_answer,
        "final_answer": {"base": base["final_answer"], "candidate": candidate["final_answer"]},
        "metrics": metrics,
        "action_sequence": {
            "base_length": len(base_actions),
            "candidate_length": len(cand_actions),
            "common_prefix": prefix,
            "common": common,
            "exact_lcs": exact,
            "changes": changes[:200],
            "change_count": len(changes),
        },
        "tool_usage": {"delta": usage},
    }
    result["different"] = bool(
        result["status_changed"]
        or result["final_answer_changed"]
        or changes
        or usage
        or metrics["model_calls"]["delta"]
        or metrics["input_tokens"]["delta"]
        or metrics["output_tokens"]["delta"]
        or result["final_stage"]["base"] != result["final_stage"]["candidate"]
    )
    return result
