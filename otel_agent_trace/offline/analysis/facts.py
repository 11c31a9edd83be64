"""What the pass knows of a session at any moment (:class:`SessionFacts`, the base of
:class:`~.accumulator.Accumulator`), and the caps that keep it bounded: memory grows with the spans
open at once and these fixed caps (slowest spans, failures, loop keys, steps), never with the
file's size.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from ..jsonvalue import JSONObject, JSONValue
from . import classify as cls
from .answer import answer_text, is_digest
from .dm_verdicts import DMVerdicts
from .records import Answer, Failure, LoopKey, Stat, Verification, answer

SLOWEST = 10
FAILURES_KEPT = 50
LOOP_KEYS_KEPT = 20_000
COMMANDS_KEPT = 2_000
UNFINISHED_KEPT = 50
OPEN_DESCRIBED = 1_000  # running spans described in full at once (the rest: id and kind)
TOOL_NAME_KEPT = 200
SYS_EVENT_NAMES_KEPT = 100


@dataclass
class SessionFacts:
    """Facts about a session gathered entry by entry (by :class:`~.accumulator.Accumulator`);
    :mod:`.checks` turns them into verdicts.

    ``actions``: keep the sequence of tool names (for ``diff``); ``steps``: keep up to this many
    model and tool calls with previews (for ``report``).
    """

    actions: bool = False
    steps: int = 0

    session_id: str = ""
    tier: str = ""
    metadata: JSONObject = field(default_factory=dict[str, JSONValue])
    entries: int = 0
    files: int = 0
    start_ts: int = 0
    first_ts: int = 0
    last_ts: int = 0
    has_root: bool = False
    ended: bool = False
    end_duration_ns: int = 0
    end_unfinished: int = 0
    messages: int = 0
    events: int = 0
    snapshots: int = 0
    by_layer: dict[str, Stat] = field(default_factory=dict[str, Stat])
    by_model: dict[str, Stat] = field(default_factory=dict[str, Stat])
    by_tool: dict[str, Stat] = field(default_factory=dict[str, Stat])
    # file, socket … events by name
    sys_events: dict[str, int] = field(default_factory=dict[str, int])
    processes: int = 0
    http_requests: int = 0
    # spans started and not yet ended, in the order they started: span id -> its start entry's id.
    # A crashed run may leave a million: each costs a few small records, never its whole entry.
    open: dict[str, str] = field(default_factory=dict[str, str])
    # of those an agent or model span: its kind; of those an execute_tool span: its tool
    open_kinds: dict[str, str] = field(default_factory=dict[str, str])
    open_tools: dict[str, str] = field(default_factory=dict[str, str])
    # (name, layer, kind, start ts, entry id) of the first OPEN_DESCRIBED spans running at once
    open_described: dict[str, tuple[str, str, str, int, str]] = field(
        default_factory=dict[str, tuple[str, str, str, int, str]]
    )
    slowest: list[tuple[int, int, str, str, str]] = field(
        default_factory=list[tuple[int, int, str, str, str]]
    )
    _calls: int = 0
    slow_floor: int = -1  # the shortest of the slowest spans once there are SLOWEST of them
    _slow_seq: int = 0
    # the id of the span being ended: its start entry's when the file has one, else its end's
    # (what ``view`` shows), or of a foreign failure entry
    span_eid: str = ""
    failures: list[Failure] = field(default_factory=list[Failure])
    failure_count: int = 0
    failures_by_stage: dict[str, int] = field(default_factory=dict[str, int])
    first_failure: Failure | None = None
    last_failure: Failure | None = None
    # key -> its latest failure
    unrecovered: dict[str, Failure] = field(default_factory=dict[str, Failure])
    retried_ok: int = 0
    root_errors: list[Failure] = field(default_factory=list[Failure])
    replans: int = 0
    format: str = "otel-agent-trace"
    dm: DMVerdicts | None = None  # a DM-Code-Agent file: DM's own verdicts
    verifications: int = 0
    # kind -> [runs, passed]
    verification_kinds: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    last_verification: Verification | None = None
    last_write_ts: int = 0
    writes: int = 0
    verified_parents: set[str] = field(default_factory=set[str])
    # tool -> verification by name; command -> verification kind
    tool_kinds: dict[str, str | None] = field(default_factory=dict[str, str | None])
    command_kinds: dict[str, str | None] = field(default_factory=dict[str, str | None])
    # tool calls by key (tool and arguments): made once (their first entry, order and failure:
    # a small record in one table, which most calls never leave), or more than once
    once: dict[int, tuple[str, int, bool]] = field(default_factory=dict[int, tuple[str, int, bool]])
    loops: dict[int, LoopKey] = field(default_factory=dict[int, LoopKey])
    last_tool_key: int | None = None
    last_answer: dict[str, Any] | None = None
    agent_answer: JSONValue = None
    action_list: list[str] = field(default_factory=list[str])
    step_list: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    steps_dropped: int = 0

    @property
    def final_answer(self) -> Answer | None:
        """The run's answer, as text the user reads (:mod:`.answer`): the outermost agent's
        output, else the last assistant message that asked for no tool (its text when the file
        has it, else its length and SHA-256). An output kept only as a digest (the trace tier)
        gives way to that message: the digest is of the whole output, run-to-run values and all
        (Strands' metrics and tracking id, a graph's whole state)."""
        output = self.agent_answer
        entry = self.last_answer
        if output is not None and not (is_digest(output) and entry is not None):
            text = answer_text(output)
            return answer(text if text is not None else output, None, None)
        if entry is None:
            return None
        return answer(entry.get("content"), entry.get("content_chars"), entry.get("content_sha256"))

    def unfinished(self, limit: int) -> list[tuple[str | None, str | None, str, int, str]]:
        """``(name, layer, kind, start ts, entry id)`` of the first ``limit`` spans still running:
        those described (all of them unless more than :data:`OPEN_DESCRIBED` ran at once) by
        start, then the others in file order, whose name and layer were not kept."""
        described = sorted(self.open_described.values(), key=lambda item: item[3])[:limit]
        if len(described) == limit or len(described) == len(self.open):
            return list(described)
        others = (
            (None, None, self._running_kind(sid), 0, eid)
            for sid, eid in self.open.items()
            if sid not in self.open_described
        )
        return [*described, *itertools.islice(others, limit - len(described))]

    def _running_kind(self, sid: str) -> str:
        kind = self.open_kinds.get(sid)
        if kind is not None:
            return kind
        return cls.KIND_TOOL if sid in self.open_tools else cls.KIND_OTHER
