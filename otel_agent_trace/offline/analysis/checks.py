"""The review checklist of one session, from an :class:`~.accumulator.Accumulator`: status, failure
stages, recovery, verification, loops, tokens and latency, unfinished spans and a health grade.

The grade follows DM-Code-Agent's trace health: a score from 1.0 minus penalties, ``good`` at
0.85 or more, ``warning`` at 0.65 or more, else ``risky``, with the reason for each penalty.
"""

from __future__ import annotations

from typing import Any, TypedDict

from . import classify as cls
from .accumulator import Accumulator
from .facts import UNFINISHED_KEPT
from .records import Failure, arguments_digest

LOOP_THRESHOLD = 3

# Penalties of the health score (DM-Code-Agent's, plus loops and unreadable lines).
PENALTIES = {
    "no_start": 0.2,
    "no_end": 0.4,
    "final_failure": 0.3,
    "verification_gap": 0.2,
    "unrecovered_failure": 0.15,
    "loop": 0.15,
    "unreadable_lines": 0.1,
}
GOOD = 0.85
WARNING = 0.65


def _s(ns: int) -> float:
    return round(ns / 1e9, 6)


def outcome(acc: Accumulator) -> tuple[str, str | None]:
    """``(status, final_failure_stage)``: status ``ok``, ``failed`` or ``incomplete``."""
    if acc.root_errors:
        error = acc.root_errors[-1]
        stage = error.stage
        if not stage:  # the agent failed because of something under it: that is the stage
            last = acc.last_failure
            stage = last.stage if last is not None and not last.recovered else cls.SYS
        return "failed", stage
    if not acc.ended:
        if acc.open:
            return "incomplete", cls.SYS  # killed mid-run (or still running)
        return "incomplete", _open_stage(acc)
    if acc.end_unfinished:
        return "failed", cls.SYS
    return "ok", _open_stage(acc)


def _open_stage(acc: Accumulator) -> str | None:
    """A failure still standing at the end of a run that ended normally: failing tests, a limit."""
    last = acc.last_verification
    if last is not None and not last.passed:
        return cls.VERIFICATION
    for failure in acc.unrecovered.values():
        if failure.stage == cls.LIMITS and failure is acc.last_failure:
            return cls.LIMITS
    return None


class Loop(TypedDict):
    """A tool call repeated with the same arguments, as the checklist shows it."""

    tool: str
    arguments_digest: str
    count: int
    failed: int
    max_consecutive: int
    first_entry: str


def loops(acc: Accumulator, threshold: int = LOOP_THRESHOLD) -> list[Loop]:
    """Tool calls repeated with the same arguments ``threshold`` times (at least twice) or more."""
    threshold = max(threshold, 2)
    found: list[Loop] = [
        {
            "tool": loop.tool,
            "arguments_digest": arguments_digest(loop.digest),
            "count": loop.count,
            "failed": loop.failed,
            "max_consecutive": loop.max_streak,
            "first_entry": loop.first_entry,
        }
        for loop in sorted(acc.loops.values(), key=lambda loop: loop.seen)  # in the order first made
        if loop.count >= threshold
    ]
    found.sort(key=lambda item: -item["count"])
    return found


def verification(acc: Accumulator, status: str) -> dict[str, Any]:
    last = acc.last_verification
    unverified_writes = acc.writes > 0 and (last is None or acc.last_write_ts > last.ts)
    return {
        "actions": acc.verifications,
        "by_kind": {
            kind: {"runs": runs, "passed": ok} for kind, (runs, ok) in sorted(acc.verification_kinds.items())
        },
        "last": None
        if last is None
        else {"kind": last.kind, "command": last.command, "passed": last.passed, "entry_id": last.entry_id},
        "files_written": acc.writes,
        "writes_after_last_verification": unverified_writes,
        "gap": status == "ok" and acc.verifications == 0,
    }


def health(
    acc: Accumulator, status: str, final_stage: str | None, found_loops: list[Loop], issues: int
) -> dict[str, Any]:
    score = 1.0
    reasons: list[str] = []

    def penalise(name: str, reason: str) -> None:
        nonlocal score
        score -= PENALTIES[name]
        reasons.append(reason)

    evicted = _evicted(acc)
    if evicted is not None:  # a DevDuck ring dropped it: its start was made from metadata.json
        penalise(
            "no_start",
            f"no session.start: DevDuck's ring of 10,000 events dropped the first {evicted} of the session",
        )
    elif not acc.has_root:
        penalise("no_start", "no session.start: the start of the file is missing")
    if not acc.ended:
        open_spans = len(acc.open)
        penalise(
            "no_end",
            f"no session.end: the run was killed or is still running ({open_spans} unfinished spans)",
        )
    elif acc.end_unfinished:
        penalise("no_end", f"{acc.end_unfinished} spans were unfinished when the session stopped")
    if final_stage is not None:
        penalise("final_failure", f"the run ended on a {final_stage} failure")
    if status == "ok" and acc.verifications == 0:
        penalise("verification_gap", "finished without running tests, a linter or the code")
    standing = [f for f in acc.unrecovered.values() if f.stage != final_stage]
    if standing:
        names = ", ".join(sorted({f.key for f in standing})[:5])
        penalise("unrecovered_failure", f"failures never followed by a success of the same call: {names}")
    if found_loops:
        top = found_loops[0]
        penalise("loop", f"{top['tool']} called {top['count']} times with the same arguments")
    if issues:
        penalise("unreadable_lines", f"{issues} lines could not be read")
    score = round(max(score, 0.0), 2)
    grade = "good" if score >= GOOD else "warning" if score >= WARNING else "risky"
    return {"grade": grade, "score": score, "reasons": reasons}


def _evicted(acc: Accumulator) -> int | None:
    """How many events a DevDuck file's ring dropped, its start among them (``None``: its start is
    there). Its session start was made up from ``metadata.json`` (:mod:`.foreign`): no entry."""
    if not acc.metadata.get("session_start_evicted"):
        return None
    count = acc.metadata.get("events_evicted")
    return count if isinstance(count, int) else 0


def _failure(failure: Failure | None, start: int) -> dict[str, Any] | None:
    return None if failure is None else failure.to_dict(start)


def analyze(
    acc: Accumulator, issues: list[Any], *, path: str = "", loop_threshold: int = LOOP_THRESHOLD
) -> dict[str, Any]:
    """The checklist of one session as a JSON-ready dict."""
    start = acc.start_ts or acc.first_ts
    status, final_stage = outcome(acc)
    found_loops = loops(acc, loop_threshold)
    duration_ns = acc.end_duration_ns if acc.ended and acc.end_duration_ns else max(acc.last_ts - start, 0)
    time_known = acc.dm is None or acc.dm.untimed == 0  # a DM timestamp may be no time (DM's "t0")
    measured = acc.ended and acc.end_duration_ns > 0  # the run's own measure, not the clock's
    duration_s = _s(duration_ns) if time_known or measured else None
    models = {name: stat.to_dict() for name, stat in sorted(acc.by_model.items())}
    tokens_in = sum(stat.input_tokens for stat in acc.by_model.values())
    tokens_out = sum(stat.output_tokens for stat in acc.by_model.values())
    cache = sum(stat.cache_read_tokens for stat in acc.by_model.values())
    primary = acc.first_failure.stage if acc.first_failure is not None else None
    if primary is None and status != "ok":
        primary = final_stage
    unfinished = acc.unfinished(UNFINISHED_KEPT)
    answer = acc.final_answer
    meta = acc.metadata
    return {
        "path": path,
        "session_id": acc.session_id,
        "format": acc.format,
        "tier": acc.tier,
        "format_version": meta.get("format_version"),
        "argv": meta.get("argv"),
        "status": status,
        "complete": acc.ended,
        "duration_s": duration_s,
        "time_known": time_known,
        "entries": acc.entries - (_evicted(acc) is not None),  # a start made up is no entry
        "files": max(acc.files, 1),
        "counts": {
            "spans": sum(stat.count for stat in acc.by_layer.values()),
            "model_calls": sum(stat.count for stat in acc.by_model.values()),
            "tool_calls": sum(stat.count for stat in acc.by_tool.values()),
            "processes": acc.processes,
            "http_requests": acc.http_requests,
            "messages": acc.messages,
            "snapshots": acc.snapshots,
            "events": acc.events,
            "sys_events": dict(sorted(acc.sys_events.items())),
        },
        "final_answer": answer,
        "failure": {
            "primary_stage": primary,
            "final_stage": final_stage,
            "count": acc.failure_count,
            "by_stage": dict(sorted(acc.failures_by_stage.items())),
            "first": _failure(acc.first_failure, start),
            "last": _failure(acc.last_failure, start),
        },
        "recovery": {
            "failures": acc.failure_count,
            "first_failure": _failure(acc.first_failure, start),
            "retried_ok": acc.retried_ok,
            "replans": acc.replans,
            "later_attempt_succeeded": acc.retried_ok > 0,
            "unrecovered": sorted(acc.unrecovered),
            "recovered": acc.failure_count > 0 and final_stage is None,
        },
        "verification": verification(acc, status),
        "loops": found_loops,
        "tokens": {"input": tokens_in, "output": tokens_out, "cache_read": cache, "by_model": models},
        "latency": {
            "by_layer": {name: stat.to_dict() for name, stat in sorted(acc.by_layer.items())},
            "by_model": models,
            "by_tool": {name: stat.to_dict() for name, stat in sorted(acc.by_tool.items())},
        },
        "slowest": [
            {"name": name, "layer": layer, "duration_s": _s(dur), "entry_id": eid}
            for dur, _, name, eid, layer in sorted(acc.slowest, reverse=True)
        ],
        "unfinished": {
            "count": len(acc.open),
            "spans": [
                {
                    "name": name,
                    "layer": layer,
                    "kind": kind,
                    "entry_id": eid,
                    "started_at_s": round((ts - start) / 1e9, 3) if ts and start else None,
                }
                for name, layer, kind, ts, eid in unfinished
            ],
        },
        "health": health(acc, status, final_stage, found_loops, len(issues)),
        "issues": [str(issue) for issue in issues[:20]],
        "issue_count": len(issues),
        **({"dm": acc.dm.verdicts()} if acc.dm is not None else {}),
        **({"events_evicted": evicted} if (evicted := _evicted(acc)) is not None else {}),
    }
