"""One streaming pass over a session: counters, open spans and a few bounded lists.

:class:`Accumulator` is fed entries one by one (:func:`summarize` does it for a file with
:func:`otel_agent_trace.session_format.iter_entries`; a DevDuck or DM-Code-Agent session through
the loader and :mod:`.foreign`). Memory is bounded by the number of spans
open at once and fixed caps (slowest spans, failures, steps), never by the file's size: nothing
keeps entries. Every value is read defensively: a field of the wrong type counts as missing.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import os
import sys
import zlib
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import orjson

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

from ..jsonvalue import JSONObject, JSONValue
from . import classify as cls
from . import foreign
from .answer import answer_text, is_digest
from .dm_verdicts import DMVerdicts

SLOWEST = 10
FAILURES_KEPT = 50
LOOP_KEYS_KEPT = 20_000
COMMANDS_KEPT = 2_000
UNFINISHED_KEPT = 50
OPEN_DESCRIBED = 1_000  # running spans described in full at once (the rest: id and kind)
TOOL_NAME_KEPT = 200
SYS_EVENT_NAMES_KEPT = 100
PREVIEW = 160

_MODEL_OPS = cls.MODEL_OPERATIONS
_LIMIT_REASONS = cls.LIMIT_FINISH_REASONS
_OP = semconv.GEN_AI_OPERATION_NAME
_TOKENS_IN, _TOKENS_OUT = semconv.GEN_AI_USAGE_INPUT_TOKENS, semconv.GEN_AI_USAGE_OUTPUT_TOKENS
_TOKENS_CACHE = semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
_KIND_TOOL, _KIND_PROCESS = cls.KIND_TOOL, cls.KIND_PROCESS
_KIND_HTTP, _KIND_AGENT = cls.KIND_HTTP, cls.KIND_AGENT
_SPAN_END, _SPAN_START, _SPAN_EVENT = fmt.SPAN_END, fmt.SPAN_START, fmt.SPAN_EVENT
_MESSAGE, _SNAPSHOT, _LAYER_SYS, _ERROR = fmt.MESSAGE, fmt.SNAPSHOT, fmt.LAYER_SYS, fmt.STATUS_ERROR
_OP_TOOL = semconv.OP_EXECUTE_TOOL
_TOOL_NAME, _TOOL_ARGS = semconv.GEN_AI_TOOL_NAME, semconv.GEN_AI_TOOL_CALL_ARGUMENTS
_REQUEST_MODEL, _RESPONSE_MODEL = semconv.GEN_AI_REQUEST_MODEL, semconv.GEN_AI_RESPONSE_MODEL
_FINISH_REASONS = semconv.GEN_AI_RESPONSE_FINISH_REASONS
_COMMAND_KEYS = cls.COMMAND_KEYS
_FILE_ACCESS = "agent_trace.file.access"
_WRITE_ACCESS = ("write", "readwrite", "append")
_WRITE_EVENTS = ("file.delete", "file.rename", "file.write")
_NO_ATTRS: JSONObject = {}  # read, never written
_dumps, _SORT_KEYS, _crc32 = orjson.dumps, orjson.OPT_SORT_KEYS, zlib.crc32


def _d(value: JSONValue) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _int(value: JSONValue) -> int:
    return value if type(value) is int else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _preview(value: JSONValue, limit: int = PREVIEW) -> str:
    """A short one-line text of a value read from a file (JSON for structures)."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = orjson.dumps(value).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Answer(TypedDict):
    """A run's final answer: its text when the file has it, else its length and SHA-256."""

    text: str | None
    chars: int
    sha256: str | None


def arguments_digest(key: int) -> str:
    """The arguments key as hex (for output)."""
    return f"{key:012x}"


@dataclass(slots=True)
class Stat:
    """Count, total and longest duration, errors and tokens of a group of spans."""

    count: int = 0
    total_ns: int = 0
    max_ns: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0

    def add(self, duration: int, error: bool) -> None:
        self.count += 1
        self.total_ns += duration
        if duration > self.max_ns:
            self.max_ns = duration
        if error:
            self.errors += 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "count": self.count,
            "errors": self.errors,
            "total_s": round(self.total_ns / 1e9, 6),
            "mean_s": round(self.total_ns / self.count / 1e9, 6) if self.count else 0.0,
            "max_s": round(self.max_ns / 1e9, 6),
        }
        if self.input_tokens or self.output_tokens or self.cache_read_tokens:
            out["input_tokens"] = self.input_tokens
            out["output_tokens"] = self.output_tokens
            if self.cache_read_tokens:
                out["cache_read_tokens"] = self.cache_read_tokens
        return out


@dataclass
class Failure:
    """One failure seen in the run, with the key a later success of the same thing clears."""

    stage: str
    key: str
    entry_id: str
    name: str
    reason: str
    ts: int
    recovered: bool = False

    def to_dict(self, start_ts: int) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "entry_id": self.entry_id,
            "name": self.name,
            "reason": self.reason,
            "at_s": round((self.ts - start_ts) / 1e9, 3) if self.ts and start_ts else None,
            "recovered": self.recovered,
        }


@dataclass
class Verification:
    kind: str
    command: str
    passed: bool
    entry_id: str
    ts: int


@dataclass(slots=True)
class LoopKey:
    """A tool call made more than once with the same arguments."""

    tool: str
    digest: int  # the arguments' length and CRC-32
    count: int
    failed: int
    streak: int
    max_streak: int
    first_entry: str
    seen: int  # the order in which the call was first made


@dataclass
class Accumulator:
    """Facts about a session gathered entry by entry; :mod:`.checks` turns them into verdicts.

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
            return _answer(text if text is not None else output, None, None)
        if entry is None:
            return None
        return _answer(entry.get("content"), entry.get("content_chars"), entry.get("content_sha256"))

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

    # --- feeding --------------------------------------------------------------------------
    #
    # The hot path. Most entries are messages, span starts, span ends and file events: those are
    # handled inline in :meth:`consume` or by one bound method each, with no per-entry dicts or
    # tuples; what a span's end needs (its name, the error text, the loop key, the verification
    # check) is computed only for the kinds of span that use it. Times: a span's end, a session
    # entry and the last entry of each file move the clock (``last_ts``); messages and span
    # starts in between never end a run later than the entries after them.

    def feed(self, entry: dict[str, Any]) -> None:
        """Take one entry into account."""
        self.entries += 1
        self._ts(entry)
        kind = entry.get("type")
        if kind == _SPAN_END:
            self._span_end(entry)
        elif kind == _MESSAGE:
            self.messages += 1
            if entry.get("role") == "assistant" and not entry.get("tool_calls"):
                self.last_answer = entry  # read once at the end (the entry is small in the trace tier)
        elif kind == _SPAN_START:
            self._span_start(entry)
        elif kind == _SPAN_EVENT:
            self.events += 1
            if entry.get("layer") == _LAYER_SYS:
                self._sys_event(entry)
        else:
            self._other(entry, kind)

    def consume(self, entries: Iterable[dict[str, Any]]) -> None:
        """:meth:`feed` every entry (the same result), the common ones inline."""
        it = iter(entries)
        for entry in it:
            self.feed(entry)  # the first entry of a file starts the clock
            break
        else:
            return
        span_start, span_end = self._span_start, self._span_end
        sys_event, other = self._sys_event, self._other
        count = messages = events = 0
        last_answer = self.last_answer
        try:
            for entry in it:
                count += 1
                kind = entry.get("type")
                if kind == _SPAN_END:
                    span_end(entry)
                elif kind == _MESSAGE:
                    messages += 1
                    if entry.get("role") == "assistant" and not entry.get("tool_calls"):
                        last_answer = entry
                elif kind == _SPAN_START:
                    span_start(entry)
                elif kind == _SPAN_EVENT:
                    events += 1
                    if entry.get("layer") == _LAYER_SYS:
                        sys_event(entry)
                else:
                    other(entry, kind)
        finally:
            self.entries += count
            self.messages += messages
            self.events += events
            self.last_answer = last_answer
            self._ts(entry)  # the file's last entry: the run lasted at least until then

    def _ts(self, entry: dict[str, Any]) -> int:
        """An entry's time (0 when it has none), moving the session's first and last times."""
        ts = entry.get("ts")
        if type(ts) is not int or ts <= 0:
            return 0
        if ts > self.last_ts:
            self.last_ts = ts
            if not self.first_ts:
                self.first_ts = ts
        return ts

    def _other(self, entry: dict[str, Any], kind: object) -> None:
        """Entries met once or rarely: snapshots, session start, join and end."""
        ts = self._ts(entry)
        if kind == _SNAPSHOT:
            self.snapshots += 1
        elif kind == fmt.SESSION_START or kind == fmt.SESSION_JOIN:
            self._session_start(entry, kind, ts)
        elif kind == fmt.SESSION_END and self.files <= 1:  # the parent's end, not a child's
            self.ended = True
            self.end_duration_ns = _int(entry.get("duration_ns"))
            self.end_unfinished = _int(entry.get("unfinished_spans"))
        elif kind is foreign.FAILURE:  # a foreign format's failure that is no span
            self.span_eid = _eid(entry)
            self._fail(entry["stage"], entry["key"], entry, entry["reason"], ts)
        elif kind is foreign.REPLAN:
            self.replans += 1

    def _session_start(self, entry: dict[str, Any], kind: object, ts: int) -> None:
        self.files += 1
        if kind == fmt.SESSION_START and not self.has_root:
            self.has_root = True
            self.session_id = _text(entry.get("session_id"))
            self.tier = _text(entry.get("tier"))
            self.metadata = _d(entry.get("metadata"))
            self.start_ts = ts

    def _sys_event(self, entry: dict[str, Any]) -> None:
        name = entry.get("name")
        if type(name) is not str:
            return
        counts = self.sys_events
        count = counts.get(name)
        if count is not None:
            counts[name] = count + 1
        elif len(counts) < SYS_EVENT_NAMES_KEPT:
            counts[name] = 1
        if name == "file.open":
            attrs: JSONValue = entry.get("attributes")
            if type(attrs) is not dict or attrs.get(_FILE_ACCESS) not in _WRITE_ACCESS:
                return
        elif name not in _WRITE_EVENTS:
            return
        self.writes += 1
        ts = entry.get("ts")
        if type(ts) is int and ts > self.last_write_ts:
            self.last_write_ts = ts

    def _span_start(self, entry: dict[str, Any]) -> None:
        """A span's start: remembered by id until its end (what its children ask of it, and a
        description while few spans run at once)."""
        sid = entry.get("span_id")
        if type(sid) is not str:
            return
        eid = entry.get("id")
        self.open[sid] = eid if type(eid) is str else _text(eid)
        name, _, kind, _, _ = described = open_span(entry)
        if kind == cls.KIND_AGENT or kind == cls.KIND_MODEL:
            self.open_kinds[sid] = kind
        elif name.startswith("execute_tool"):
            attrs: JSONValue = entry.get("attributes")
            tool = attrs.get(_TOOL_NAME) if type(attrs) is dict else None
            if type(tool) is not str or not tool:
                tool = name.removeprefix("execute_tool ").strip()
            self.open_tools[sid] = tool[:TOOL_NAME_KEPT]
        if len(self.open_described) < OPEN_DESCRIBED:
            self.open_described[sid] = described

    def _span_end(self, entry: dict[str, Any]) -> None:
        """A span's end: the stats every span has, then its kind's own handler."""
        attrs: JSONValue = entry.get("attributes")
        if type(attrs) is not dict:
            attrs = _NO_ATTRS
        sid = entry.get("span_id")
        eid = None
        if type(sid) is str:
            eid = self.open.pop(sid, None)  # one span, one id everywhere: its start entry's
            if eid is not None:
                if self.open_kinds:
                    self.open_kinds.pop(sid, None)
                if self.open_tools:
                    self.open_tools.pop(sid, None)
                self.open_described.pop(sid, None)
        if eid is None:
            eid = entry.get("id")
        self.span_eid = eid if type(eid) is str else _text(eid)
        ts = entry.get("ts")
        if type(ts) is not int or ts <= 0:
            ts = 0
        elif ts > self.last_ts:
            self.last_ts = ts
            if not self.first_ts:
                self.first_ts = ts
        duration = entry.get("duration_ns")
        if type(duration) is not int or duration < 0:
            duration = 0
        status: JSONValue = entry.get("status")
        error = type(status) is dict and status.get("code") == _ERROR
        layer = entry.get("layer")
        if type(layer) is not str:
            layer = _text(layer)
        stat = self.by_layer.get(layer)
        if stat is None:
            stat = self.by_layer[layer] = Stat()
        stat.count += 1
        stat.total_ns += duration
        if duration > stat.max_ns:
            stat.max_ns = duration
        if error:
            stat.errors += 1
        if duration > self.slow_floor:
            self._slow(entry, duration, layer)
        op = attrs.get(_OP)
        if op == _OP_TOOL:
            self._tool(entry, attrs, duration, error, status, ts)
        elif type(op) is str and op in _MODEL_OPS:
            self._model(entry, attrs, duration, error, status, ts)
        else:
            kind = cls.span_kind(_name(entry), layer, attrs)
            if kind == _KIND_TOOL:
                self._tool(entry, attrs, duration, error, status, ts)
            elif kind == _KIND_PROCESS:
                self._process(entry, attrs, error, status, ts)
            elif kind == _KIND_HTTP:
                self._http(entry, attrs, error, ts)
            elif kind == _KIND_AGENT:
                self._agent(entry, error, status, ts)

    def _within_same_tool(self, entry: dict[str, Any], tool: str) -> bool:
        """Whether this tool span runs directly inside a span of the same tool still open: a
        framework's tool over an ``@oat.tool`` function, one call (a model replay answering the
        outer one runs no inner one, and must count the same)."""
        parent_id = entry.get("parent_span_id")
        return type(parent_id) is str and self.open_tools.get(parent_id) == tool[:TOOL_NAME_KEPT]

    def _slow(self, entry: dict[str, Any], duration: int, layer: str) -> None:
        """One of the slowest spans so far (a bounded heap; ``slow_floor`` its smallest)."""
        self._slow_seq += 1
        item = (duration, self._slow_seq, _name(entry), self.span_eid, layer)
        slow = self.slowest
        if len(slow) < SLOWEST:
            heapq.heappush(slow, item)
            if len(slow) < SLOWEST:
                return
        else:
            heapq.heapreplace(slow, item)
        self.slow_floor = slow[0][0]

    def _agent(self, entry: dict[str, Any], error: bool, status: JSONValue, ts: int) -> None:
        if not self._outermost_agent(entry.get("parent_span_id")):
            return
        content: JSONValue = entry.get("content")
        if type(content) is dict and "agent_output" in content:
            self.agent_answer = content["agent_output"]
        if error:  # the run failed; the stage is decided by what failed under it (checks.outcome)
            why = _why(entry.get("attributes"), status)
            self.root_errors.append(
                Failure(cls.failure_stage(why, ""), "agent", self.span_eid, _name(entry), why, ts)
            )

    def _outermost_agent(self, parent: Any) -> bool:
        """No agent span above this one (a trace root, or under a plain span or another file's)."""
        return not isinstance(parent, str) or self.open_kinds.get(parent) != cls.KIND_AGENT

    # --- kinds of spans -------------------------------------------------------------------

    def _model(
        self, entry: dict[str, Any], attrs: JSONObject, duration: int, error: bool, status: JSONValue, ts: int
    ) -> None:
        # the model asked for: the same key for a failed call and its retry
        model = attrs.get(_REQUEST_MODEL) or attrs.get(_RESPONSE_MODEL) or _name(entry)
        if type(model) is not str:
            model = _text(model)
        stat = self.by_model.get(model)
        if stat is None:
            stat = self.by_model[model] = Stat()
        stat.count += 1
        stat.total_ns += duration
        if duration > stat.max_ns:
            stat.max_ns = duration
        if error:
            stat.errors += 1
        tokens_in = attrs.get(_TOKENS_IN, 0)
        if type(tokens_in) is not int:
            tokens_in = 0
        tokens_out = attrs.get(_TOKENS_OUT, 0)
        if type(tokens_out) is not int:
            tokens_out = 0
        stat.input_tokens += tokens_in
        stat.output_tokens += tokens_out
        cache = attrs.get(_TOKENS_CACHE)
        if type(cache) is int:
            stat.cache_read_tokens += cache
        reasons = attrs.get(_FINISH_REASONS)
        limited = False
        if type(reasons) is not list:
            reasons = []
        elif reasons:
            try:
                limited = not _LIMIT_REASONS.isdisjoint(reasons)
            except TypeError:  # an unhashable reason: look at the strings one by one
                limited = any(type(r) is str and r in _LIMIT_REASONS for r in reasons)
        if error:
            why = _why(attrs, status)
            self._fail(cls.failure_stage(why, cls.MODEL), "model:" + model, entry, why, ts)
        elif limited:
            reason = f"finish reason {', '.join(map(str, reasons))}"
            self._fail(cls.LIMITS, "model:" + model, entry, reason, ts)
        elif self.unrecovered:
            self._ok("model:" + model)
        if self.steps:
            asked = attrs.get(semconv.TOOL_CALL_NAMES)
            detail = f"tokens {tokens_in}→{tokens_out}"
            if reasons:
                detail += f", finish {', '.join(map(str, reasons))}"
            if isinstance(asked, list) and asked:
                detail += f", asks {', '.join(str(a) for a in asked)}"
            why = _why(attrs, status) if error else ""
            self._step("model", model, ts - duration if ts else 0, duration, why, detail, self.span_eid)

    def _tool(
        self, entry: dict[str, Any], attrs: JSONObject, duration: int, error: bool, status: JSONValue, ts: int
    ) -> None:
        tool = attrs.get(_TOOL_NAME)
        if type(tool) is not str or not tool:
            name = _name(entry)
            tool = _text(tool) or name.removeprefix("execute_tool ").strip() or name
        if self._within_same_tool(entry, tool):
            return  # one call, recorded by two layers: counted at the outer span
        stat = self.by_tool.get(tool)
        if stat is None:
            stat = self.by_tool[tool] = Stat()
        stat.count += 1
        stat.total_ns += duration
        if duration > stat.max_ns:
            stat.max_ns = duration
        if error:
            stat.errors += 1
        if self.actions:
            self.action_list.append(sys.intern(tool))
        content: JSONValue = entry.get("content")
        if type(content) is not dict:
            content = _NO_ATTRS
        args: JSONValue
        if "tool_arguments" in content:
            has_args, args = True, content["tool_arguments"]
        else:
            has_args = _TOOL_ARGS in attrs
            args = attrs.get(_TOOL_ARGS)
        if error:
            why = _why(attrs, status)
            self._fail(cls.failure_stage(why, cls.TOOL), "tool:" + tool, entry, why, ts)
        elif self.unrecovered:
            self._ok("tool:" + tool)
        if has_args:
            try:  # the loop key: length and CRC-32 of the arguments' canonical JSON
                raw = _dumps(args, option=_SORT_KEYS)
            except (TypeError, orjson.JSONEncodeError):
                raw = repr(args).encode("utf-8", "replace")
            digest = (len(raw) << 32) | _crc32(raw)
            self._loop(digest ^ hash(tool), tool, digest, error, entry)
        verified = self.verified_parents
        if verified and entry.get("span_id") in verified:
            verified.discard(entry.get("span_id"))  # a verification process under it already counted
        else:
            if not has_args or (type(args) is dict and args.keys().isdisjoint(_COMMAND_KEYS)):
                command = ""  # the common case: no command among the arguments
            else:
                command = cls.command_in_arguments(args)
            vkind = self._verification_kind(command) if command else None
            if vkind is None:
                vkind = self.tool_kinds.get(tool, "")
                if vkind == "":
                    vkind = self.tool_kinds[tool] = cls.tool_name_verification_kind(tool)
            if vkind is not None:
                result = content.get("tool_result")
                code = None
                if isinstance(result, dict):
                    code = result.get("exit_code", result.get("returncode"))
                passed = not error and (code is None or code == 0)
                self._verify(vkind, _preview(command or args, PREVIEW) or tool, passed, entry, ts)
        if self.steps:
            detail = f"args {_preview(args, 120)}" if has_args else ""
            if "tool_result" in content:
                detail += f"{'; ' if detail else ''}result {_preview(content['tool_result'], 120)}"
            call_id = attrs.get(semconv.GEN_AI_TOOL_CALL_ID)
            if call_id:
                detail = f"[{_text(call_id)}] {detail}"
            why = _why(attrs, status) if error else ""
            self._step("tool", tool, ts - duration if ts else 0, duration, why, detail, self.span_eid)

    def _process(
        self, entry: dict[str, Any], attrs: JSONObject, error: bool, status: JSONValue, ts: int
    ) -> None:
        self.processes += 1
        command = cls.command_text(attrs)
        exit_code = attrs.get(semconv.PROCESS_EXIT_CODE)
        failed = error or (type(exit_code) is int and exit_code != 0)
        vkind = self._verification_kind(command)
        if vkind is not None:
            parent = entry.get("parent_span_id")
            if isinstance(parent, str) and parent in self.open:
                self.verified_parents.add(parent)
            self._verify(vkind, _preview(command, PREVIEW), not failed, entry, ts)
            return
        exe = _text(attrs.get("process.executable.name")) or _name(entry).removeprefix("process ").strip()
        if failed:
            why = _why(attrs, status) if error else ""
            reason = why or f"exit code {exit_code}"
            self._fail(cls.failure_stage(why, cls.SYS), "sys:" + exe, entry, reason, ts)
        elif self.unrecovered:
            self._ok("sys:" + exe)

    def _http(self, entry: dict[str, Any], attrs: JSONObject, error: bool, ts: int) -> None:
        self.http_requests += 1
        parent = entry.get("parent_span_id")
        if isinstance(parent, str) and self.open_kinds.get(parent) == cls.KIND_MODEL:
            return  # the model span says how the call went
        code = attrs.get(semconv.HTTP_RESPONSE_STATUS_CODE)
        host = _text(attrs.get(semconv.SERVER_ADDRESS)) or "?"
        key = "http:" + host
        if error or (type(code) is int and code >= 400):
            reason = f"HTTP {code}" if code is not None else "request failed"
            stage = cls.LIMITS if code == 429 else cls.SYS
            self._fail(stage, key, entry, reason, ts)
        else:
            self._ok(key)

    # --- failures, verification, loops ----------------------------------------------------

    def _fail(self, stage: str, key: str, entry: dict[str, Any], reason: str, ts: int) -> None:
        failure = Failure(stage, key, self.span_eid, _name(entry), reason[:300], ts)
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


def _name(entry: dict[str, Any]) -> str:
    name = entry.get("name")
    return name if type(name) is str else _text(name)


def _eid(entry: dict[str, Any]) -> str:
    eid = entry.get("id")
    return eid if type(eid) is str else _text(eid)


def _why(attrs: JSONValue, status: JSONValue) -> str:
    """The text of a span's error: its ``error.type`` and status description."""
    why = _text(attrs.get(semconv.ERROR_TYPE)) if type(attrs) is dict else ""
    desc = _text(status.get("description")) if type(status) is dict else ""
    return f"{why}: {desc}" if why and desc and not desc.startswith(why) else desc or why or "error"


def open_span(entry: dict[str, Any]) -> tuple[str, str, str, int, str]:
    """``(name, layer, kind, start ts, entry id)`` of a running span from its start entry."""
    attrs: JSONValue = entry.get("attributes")
    op = attrs.get(_OP) if type(attrs) is dict else None
    name = _text(entry.get("name"))
    layer = _text(entry.get("layer"))
    ts = entry.get("ts")
    return (
        name,
        layer,
        cls.start_kind(name, layer, op),
        ts if type(ts) is int else 0,
        _text(entry.get("id")),
    )


def _answer(content: JSONValue, chars: JSONValue, sha: JSONValue) -> Answer:
    """A final answer: its text when the file has it, else its length and SHA-256."""
    if isinstance(content, str):
        return {
            "text": content,
            "chars": len(content),
            "sha256": hashlib.sha256(content.encode()).hexdigest(),
        }
    if content is not None:
        text = _preview(content, 10_000)
        return {"text": text, "chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return {"text": None, "chars": _int(chars), "sha256": _text(sha) or None}


def session_paths(path: Path, issues: list[fmt.ReadIssue] | None = None) -> list[Path]:
    """A session file followed by its child processes' files (for a JSONL file; a ZIP has them);
    a child name that is not a regular file is left out, noted in ``issues``."""
    if path.suffix != fmt.JSONL_SUFFIX or not path.is_file():
        return [path]
    stem = path.name[: -len(fmt.JSONL_SUFFIX)]
    tier = "trace"
    if stem.endswith(fmt.CHECKPOINT_SUFFIX):
        stem, tier = stem[: -len(fmt.CHECKPOINT_SUFFIX)], "checkpoint"
    if ".p" in stem.rsplit("-", 1)[-1]:  # a child file itself
        return [path]
    return fmt.child_files(path.parent, stem, path, tier, issues)


def summarize(
    path: str | os.PathLike[str],
    *,
    actions: bool = False,
    steps: int = 0,
    strict: bool = False,
    children: list[Path] | None = None,
) -> tuple[Accumulator, list[fmt.ReadIssue]]:
    """Read a session (and its child files) in one streaming pass. ``children``: the child
    files when the caller knows them already (else they are looked up beside ``path``)."""
    acc = Accumulator(actions=actions, steps=steps)
    issues: list[fmt.ReadIssue] = []
    if children is None:
        parts = session_paths(Path(path), issues)
    else:
        parts = [Path(path), *fmt.regular_files(children, issues)]
    for number, part in enumerate(parts):
        entries: Iterator[dict[str, Any]] = fmt.iter_entries(part, None if strict else issues)
        if number == 0:
            entries = _in_our_shape(acc, part, entries, issues, strict)
        acc.consume(entries)
    if not acc.entries:
        raise fmt.SessionFormatError(path, None, "no session entries (an empty file)")
    return acc, issues


def _in_our_shape(
    acc: Accumulator,
    path: Path,
    entries: Iterator[dict[str, Any]],
    issues: list[fmt.ReadIssue],
    strict: bool,
) -> Iterator[dict[str, Any]]:
    """A session's entries in our shape: ours as they are read; a DevDuck or DM-Code-Agent
    session (told from its first entry) read by the loader and mapped by :mod:`.foreign`."""
    from otel_agent_trace.offline import formats  # the loader only for a foreign file

    seen = len(issues)
    first = next(entries, None)
    if first is None:
        return entries
    module = formats.detect(first)
    if module is formats.native:
        return itertools.chain((first,), entries)
    if isinstance(entries, Generator):  # the reader's: its file closed now
        entries.close()
    del issues[seen:]  # read again below
    from otel_agent_trace.offline.loader import iter_entries

    acc.format = module.NAME
    mapped = iter_entries(path, None if strict else issues, strict=strict, children=False)
    if module is formats.dm:  # DM's own verdicts, read on the way (the same pass)
        acc.dm = DMVerdicts()
        return foreign.dm_entries(acc.dm.read(mapped))
    return foreign.as_ours(module, mapped)
