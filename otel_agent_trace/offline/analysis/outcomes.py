"""What a span's end concludes beyond its counts: a failure (and the later success of the same
thing that recovers it), a verification run, a tool call repeated with the same arguments, a step
kept for the report. The methods :class:`~.accumulator.Accumulator` calls as it reads spans."""

from __future__ import annotations

from typing import Any

from . import classify as cls
from .facts import COMMANDS_KEPT, FAILURES_KEPT, LOOP_KEYS_KEPT, SessionFacts
from .records import Failure, LoopKey, Verification
from .values import name_of


class Outcomes(SessionFacts):
    """:class:`SessionFacts` with the ways a span's end changes them (failures, recovery,
    verification, loops, steps)."""

    def _fail(self, stage: str, key: str, entry: dict[str, Any], reason: str, ts: int) -> None:
        failure = Failure(stage, key, self.span_eid, name_of(entry), reason[:300], ts)
        self.failure_count += 1
        self.failures_by_stage[stage] = self.failures_by_stage.get(stage, 0) + 1
        if self.first_failure is None:
            self.first_failure = failure
        self.last_failure = failure
        self.unrecovered[key] = failure
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(failure)

    def _ok(self, key: str) -> None:
        failure = self.unrecovered.pop(key, None) if self.unrecovered else None
        if failure is not None:
            failure.recovered = True
            self.retried_ok += 1

    def _verification_kind(self, command: str) -> str | None:
        """:func:`classify.verification_kind`, remembered for the commands a run repeats."""
        memo = self.command_kinds
        kind = memo.get(command, "")
        if kind == "":
            kind = cls.verification_kind(command)
            if len(memo) < COMMANDS_KEPT:
                memo[command] = kind
        return kind

    def _verify(self, kind: str, command: str, passed: bool, entry: dict[str, Any], ts: int) -> None:
        self.verifications += 1
        counts = self.verification_kinds.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += passed
        self.last_verification = Verification(kind, command, passed, self.span_eid, ts)
        key = "verification:" + kind
        if passed:
            self._ok(key)
        else:
            self._fail(cls.VERIFICATION, key, entry, f"{kind} failed: {command}", ts)

    def _loop(self, key: int, tool: str, digest: int, error: bool, entry: dict[str, Any]) -> None:
        """Count a tool call by its key (up to LOOP_KEYS_KEPT distinct keys)."""
        loop = self.loops.get(key)
        if loop is not None:
            loop.count += 1
            loop.failed += error
            loop.streak = loop.streak + 1 if self.last_tool_key == key else 1
            if loop.streak > loop.max_streak:
                loop.max_streak = loop.streak
        else:
            first = self.once.pop(key, None)
            if first is None:  # a call not made before
                if len(self.once) + len(self.loops) < LOOP_KEYS_KEPT:
                    self._calls += 1
                    self.once[key] = (self.span_eid, self._calls, error)
            else:  # made a second time
                streak = 2 if self.last_tool_key == key else 1
                eid, seen, failed = first
                self.loops[key] = LoopKey(tool, digest, 2, failed + error, streak, streak, eid, seen)
        self.last_tool_key = key

    def _step(self, kind: str, name: str, start: int, duration: int, why: str, detail: str, eid: str) -> None:
        if len(self.step_list) >= self.steps:
            self.steps_dropped += 1
            return
        self.step_list.append(
            {
                "kind": kind,
                "name": name,
                "start_ts": start,
                "duration_s": round(duration / 1e9, 6),
                "error": why or None,
                "detail": detail,
                "entry_id": eid,
            }
        )
