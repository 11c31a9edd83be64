"""DM-Code-Agent's own verdicts on a DM-Code-Agent file, by its rules (``dm-agent-trace analyze``
at commit 968fa18, as ``/work/shared/REFERENCE.md`` §9 states them one by one), with its field
names and values: ``analyze`` of a DM file shows them as its ``dm`` object, beside our own
checklist (which keeps its own names and meaning).

Fed entry by entry in the same streaming pass as the rest of the analysis (the loader's entries:
DM's ``event`` as ``type``, its ``payload``'s fields beside ours), so memory stays bounded: the
last ``run_end``'s payload, the first failure, a few counters, up to :data:`ACTIONS_KEPT`
verification steps and up to :data:`READ_PATHS_KEPT` paths read.

The rules, in DM's words:

* **Order is file order**; ``timestamp`` is never read (durations come from ``run_end``).
* **Summary**: ``run_id`` of the first entry; ``task`` and ``schema_version`` of the first
  ``run_start``; ``status`` and ``duration_seconds`` of the **last** ``run_end`` (``""`` and none
  without one); provider and model of the first ``runtime`` (else the ``run_end``'s metadata).
* **Failures**: ``parse_error`` → ``parse``; ``llm_error`` → ``llm``; ``critic_review`` whose
  ``passed`` is falsy → ``critic`` (missing is passed); ``tool_call`` whose ``failed`` is truthy →
  ``verification`` (action ``run_tests``/``run_linter``, or an observation holding
  ``returncode: 1``, ``pytest`` or ``assertionerror``), ``tool_selection`` (``unknown tool``),
  ``tool_arguments`` (``tool arguments``), ``critic`` (``critic rejected``/``critic review
  failed``), ``tool_execution`` (``tool execution failed``), else ``tool``. Nothing else counts
  (not ``run_error``). No failure and status ``max_steps_exceeded``: one failure ``max_steps``
  at the index after the last event.
* **Verdicts**: primary = the first failure's stage or ``none``; final = ``none`` on
  ``success``, ``max_steps`` on ``max_steps_exceeded``, else primary if not ``none``, else the
  status, or ``unknown`` when it is empty. Recovery: failures, the first one's step and event,
  ``replan`` count, a ``replan`` after the first failure, recovered (failures and success).
* **Verification** (``step`` events): the finish step is the smallest step whose action is
  ``finish``/``task_complete``; actions are steps running ``run_python``/``run_tests``/
  ``run_linter``; before finish = any action, and no finish step or an action before it;
  **gap = success and not before finish**.
* **Hallucination signals** (not scored): ``observation_truncated`` events, ``edit_guard``
  events, tool observations that (stripped) start ``文件 ``/``路径 `` and end ``不存在。``/
  ``不是文件。`` (``missing_path_reference_count``), ``edit_file`` of a path no
  ``read_file``/``search_in_file`` read before.
* **trace_health**: 1.0, minus 0.2 without ``run_start`` (``missing_run_start``), 0.4 without
  ``run_end`` (``missing_run_end``), 0.3 for a final stage (``final_failure:<stage>``), 0.2 for a
  gap (``verification_gap``), 0.15 for failures with no replan after the first
  (``failure_without_replan``), 0.05 each when the final stage is not ``none`` and the
  ``run_end`` metadata counts parse errors (``unrecovered_parse_errors``) or tool errors
  (``unrecovered_tool_errors``); rounded to 2 places, kept within [0, 1]; ``good`` at 0.85 or
  more, ``warning`` at 0.65 or more, else ``risky``.

* **Signals** (labels, not scored): ``primary_failure:<stage>``, ``final_failure:<stage>``,
  ``verification_gap``, ``replanned_after_failure`` or ``no_replan_after_failure``; and the
  ``run_end`` metadata's counters as they are (``metadata_counters``).

A file holding several runs is judged as one, as DM judges it. ``analyze-dir`` sums these over a
directory as DM's does (:func:`otel_agent_trace.offline.analysis.directory.dm_summary`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypedDict

from ..jsonvalue import JSONObject, JSONValue

VERIFICATION_ACTIONS = frozenset({"run_python", "run_tests", "run_linter"})
FINISH_ACTIONS = frozenset({"finish", "task_complete"})
READ_ACTIONS = frozenset({"read_file", "search_in_file"})
MISSING_PATH_HEADS = ("文件 ", "路径 ")
MISSING_PATH_TAILS = ("不存在。", "不是文件。")
ACTIONS_KEPT = 200
READ_PATHS_KEPT = 100_000

PENALTIES = {
    "missing_run_start": 0.2,
    "missing_run_end": 0.4,
    "final_failure": 0.3,
    "verification_gap": 0.2,
    "failure_without_replan": 0.15,
    "unrecovered_parse_errors": 0.05,
    "unrecovered_tool_errors": 0.05,
}
GOOD = 0.85
WARNING = 0.65
METADATA_COUNTERS = (
    "parse_error_count",
    "parse_repair_count",
    "tool_error_count",
    "unknown_tool_count",
    "argument_error_count",
    "critic_reject_count",
    "replan_count",
)


def tool_failure_stage(action: Any, observation: Any) -> str:
    """The stage of a failed ``tool_call``, by DM's first matching rule."""
    if str(action or "") in ("run_tests", "run_linter"):
        return "verification"
    text = str(observation or "").lower()
    if "returncode: 1" in text or "pytest" in text or "assertionerror" in text:
        return "verification"
    if "unknown tool" in text:
        return "tool_selection"
    if "tool arguments" in text:
        return "tool_arguments"
    if "critic rejected" in text or "critic review failed" in text:
        return "critic"
    if "tool execution failed" in text:
        return "tool_execution"
    return "tool"


def _count(value: Any) -> int:
    """A metadata counter as a number (DM's ``int(x or 0)``; what is no number counts 0)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def _step_number(value: Any, default: int) -> int:
    """A step's number (DM's ``int(step_number or position)``)."""
    if value and not isinstance(value, (dict, list)):
        try:
            return int(value)
        except (TypeError, ValueError, OverflowError):
            pass
    return default


class RunEnd(TypedDict):
    """What is kept of the last ``run_end``: its values as the file has them."""

    status: JSONValue
    duration_seconds: JSONValue
    metadata: JSONObject


class DMVerdicts:
    """DM-Code-Agent's analysis of one file, built as its entries stream by."""

    def __init__(self) -> None:
        self.index = 0  # DM's event index: the entry's position in the file
        self.untimed = 0  # entries whose timestamp is no ISO-8601 time (DM never reads it)
        self.run_id: Any = None
        self.task: Any = ""
        self.schema_version: Any = None
        self.has_run_start = False
        self.run_end: RunEnd | None = None  # the last run_end's status, duration, metadata
        self.runtime: dict[str, JSONValue] | None = None
        self.step_count = 0
        self.tool_call_count = 0
        self.replan_count = 0
        self.failure_count = 0
        self.first_failure: dict[str, Any] | None = None
        self.replanned_after_failure = False
        self.finish_step: int | None = None
        self.first_action_step: int | None = None
        self.action_count = 0
        self.actions: list[dict[str, Any]] = []
        self.read_paths: set[str] = set()
        self.edit_without_read = 0
        self.edit_guard_blocks = 0
        self.truncation_hits = 0
        self.missing_path_references = 0

    def read(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The entries, unchanged, each taken into account on its way."""
        feed = self.feed
        for entry in entries:
            feed(entry)
            yield entry

    def feed(self, entry: dict[str, Any]) -> None:
        index = self.index
        self.index = index + 1
        if not entry.get("ts"):
            self.untimed += 1
        if index == 0:
            self.run_id = entry.get("run_id")
        event = entry.get("type")
        if event == "tool_call":
            self._tool_call(entry, index)
        elif event == "step":
            self._step(entry)
        elif event == "parse_error":
            self._fail(index, event, "parse", entry)
        elif event == "llm_error":
            self._fail(index, event, "llm", entry)
        elif event == "critic_review":
            if not entry.get("passed", True):
                self._fail(index, event, "critic", entry)
        elif event == "replan":
            self.replan_count += 1
            if self.first_failure is not None:  # a replan after the first failure
                self.replanned_after_failure = True
        elif event == "run_start":
            if not self.has_run_start:
                self.has_run_start = True
                self.task = entry.get("task", "")
                self.schema_version = entry.get("schema_version")
        elif event == "run_end":
            metadata: JSONValue = entry.get("metadata", {})
            self.run_end = {
                "status": entry.get("status", ""),
                "duration_seconds": entry.get("duration_seconds"),
                "metadata": metadata if isinstance(metadata, dict) else {},
            }
        elif event == "runtime":
            if self.runtime is None:
                self.runtime = {k: entry.get(k) for k in ("provider", "model", "base_url")}
        elif event == "observation_truncated":
            self.truncation_hits += 1
        elif event == "edit_guard":
            self.edit_guard_blocks += 1

    def _fail(self, index: int, event: str, stage: str, entry: dict[str, Any]) -> None:
        self.failure_count += 1
        if self.first_failure is None:
            self.first_failure = {
                "event_index": index,
                "event": event,
                "stage": stage,
                "step_number": entry.get("step_number"),
                "action": entry.get("action", ""),
            }

    def _tool_call(self, entry: dict[str, Any], index: int) -> None:
        self.tool_call_count += 1
        action = entry.get("action")
        observation = entry.get("observation", "")
        if entry.get("failed"):
            self._fail(index, "tool_call", tool_failure_stage(action, observation), entry)
        text = str(observation).strip()
        if text.startswith(MISSING_PATH_HEADS) and text.endswith(MISSING_PATH_TAILS):
            self.missing_path_references += 1
        action_input: JSONValue = entry.get("action_input")
        path = action_input.get("path") if isinstance(action_input, dict) else None
        if not isinstance(path, str) or not path:
            return
        action = str(action if action is not None else "")
        if action in READ_ACTIONS:
            if len(self.read_paths) < READ_PATHS_KEPT:
                self.read_paths.add(path)
        elif action == "edit_file" and path not in self.read_paths:
            self.edit_without_read += 1

    def _step(self, entry: dict[str, Any]) -> None:
        self.step_count += 1
        action = entry.get("action")
        if not isinstance(action, str):
            return
        if action in FINISH_ACTIONS:
            number = _step_number(entry.get("step_number"), self.step_count)
            if self.finish_step is None or number < self.finish_step:
                self.finish_step = number
        elif action in VERIFICATION_ACTIONS:
            number = _step_number(entry.get("step_number"), self.step_count)
            self.action_count += 1
            if self.first_action_step is None or number < self.first_action_step:
                self.first_action_step = number
            if len(self.actions) < ACTIONS_KEPT:
                self.actions.append({"step_number": number, "action": action})

    # --- the verdicts -----------------------------------------------------------------------

    @property
    def status(self) -> Any:
        return self.run_end["status"] if self.run_end is not None else ""

    @property
    def duration_seconds(self) -> float | None:
        """The last ``run_end``'s own duration (none without it, or when it is no number)."""
        value = self.run_end["duration_seconds"] if self.run_end is not None else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return None
        return float(value)

    def verdicts(self) -> dict[str, Any]:
        """DM's analysis of the file, with DM's field names and values."""
        status = str(self.status or "")
        failures = self.failure_count
        first = self.first_failure
        if first is None and status == "max_steps_exceeded":
            failures = 1
            first = {"event_index": self.index, "event": "run_end", "stage": "max_steps", "step_number": None}
        primary = str(first.get("stage") or "none") if first else "none"
        if status == "success":
            final = "none"
        elif status == "max_steps_exceeded":
            final = "max_steps"
        elif primary != "none":
            final = primary
        else:
            final = status or "unknown"
        replanned = self.replanned_after_failure and self.first_failure is not None
        before_finish = self.action_count > 0 and (
            self.finish_step is None
            or (self.first_action_step is not None and self.first_action_step < self.finish_step)
        )
        gap = self.status == "success" and not before_finish
        metadata = self.run_end["metadata"] if self.run_end is not None else {}
        runtime = self.runtime or {}
        return {
            "run_id": self.run_id,
            "task": self.task,
            "schema_version": self.schema_version,
            "status": self.status,
            "duration_seconds": self.duration_seconds,
            "provider": runtime.get("provider") or metadata.get("provider"),
            "model": runtime.get("model") or metadata.get("model"),
            "event_count": self.index,
            "step_count": self.step_count,
            "tool_call_count": self.tool_call_count,
            "replan_count": self.replan_count,
            "primary_failure_stage": primary,
            "final_failure_stage": final,
            "signals": signals(primary, final, gap, failures, replanned),
            "recovery": {
                "failure_event_count": failures,
                "first_failure_step": first.get("step_number") if first else None,
                "first_failure_event": first.get("event") if first else None,
                "replan_count": self.replan_count,
                "replanned_after_failure": replanned,
                "recovered": bool(failures and self.status == "success"),
            },
            "verification": {
                "actions": list(self.actions),
                "count": self.action_count,
                "finish_step": self.finish_step,
                "before_finish": before_finish,
                "gap": gap,
            },
            "hallucination_signals": {
                "edit_without_read_count": self.edit_without_read,
                "edit_guard_blocks": self.edit_guard_blocks,
                "truncation_hits": self.truncation_hits,
                "truncation_hit_rate": (
                    self.truncation_hits / self.tool_call_count if self.tool_call_count else 0.0
                ),
                "missing_path_reference_count": self.missing_path_references,
            },
            "metadata_counters": {k: metadata[k] for k in METADATA_COUNTERS if k in metadata},
            "trace_health": trace_health(
                has_run_start=self.has_run_start,
                has_run_end=self.run_end is not None,
                final_stage=final,
                gap=gap,
                failures=failures,
                replanned=replanned,
                metadata=metadata,
            ),
        }


def signals(primary: str, final: str, gap: bool, failures: int, replanned: bool) -> list[str]:
    """DM's signal labels of a run (advisory, not scored)."""
    out: list[str] = []
    if primary != "none":
        out.append(f"primary_failure:{primary}")
    if final != "none":
        out.append(f"final_failure:{final}")
    if gap:
        out.append("verification_gap")
    if failures:
        out.append("replanned_after_failure" if replanned else "no_replan_after_failure")
    return out


def trace_health(
    *,
    has_run_start: bool,
    has_run_end: bool,
    final_stage: str,
    gap: bool,
    failures: int,
    replanned: bool,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """DM's trace-health score, grade and issue labels."""
    score = 1.0
    issues: list[str] = []

    def penalise(name: str, label: str | None = None) -> None:
        nonlocal score
        score -= PENALTIES[name]
        issues.append(label or name)

    if not has_run_start:
        penalise("missing_run_start")
    if not has_run_end:
        penalise("missing_run_end")
    if final_stage != "none":
        penalise("final_failure", f"final_failure:{final_stage}")
    if gap:
        penalise("verification_gap")
    if failures and not replanned:
        penalise("failure_without_replan")
    if _count(metadata.get("parse_error_count")) > 0 and final_stage != "none":
        penalise("unrecovered_parse_errors")
    if _count(metadata.get("tool_error_count")) > 0 and final_stage != "none":
        penalise("unrecovered_tool_errors")
    score = max(0.0, min(1.0, round(score, 2)))
    grade = "good" if score >= GOOD else "warning" if score >= WARNING else "risky"
    return {"score": score, "grade": grade, "issues": issues}
