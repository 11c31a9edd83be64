"""DM-Code-Agent's JSONL session: ``{"id", "parent_id", "timestamp" (ISO-8601 UTC), "run_id",
"event", "payload"}``. Files written before schema 2.0 have no ids: they get ``legacy-0000``,
``legacy-0001``, … by position, each under the one before. ``payload``'s fields go beside ours.

DM never parses ``timestamp`` (its own tests write ``"t0"``; order is file order, durations come
from ``run_end``'s ``duration_seconds``): a timestamp that is not ISO-8601 is read as no time
(``ts`` 0), never refused. A run's status and duration are the **last** ``run_end``'s
(:func:`run_end_facts`), as DM's summary takes them.

A ``checkpoint`` entry (``{step_number, state}``) holds the conversation in
``state.conversation_history`` (:func:`checkpoint_messages`): it is a snapshot (:func:`snapshot`),
and a file that has one is DM's checkpoint tier (``--checkpoint``), resumable at its last
checkpoint or at the latest one at or before an entry, as ``dm-agent --resume FILE --resume-at ID``
does.

Loaded (:mod:`..loader`), a run (``run_start`` to ``run_end`` or ``run_error``) is a span named
``run`` and each ``tool_call`` a span of no duration under it (:func:`spans`); the conversation is
the ``message`` entries since the latest ``run_start``. Analysed (:func:`as_ours`; DM's rules:
``/work/shared/REFERENCE.md`` §1), a run is an agent span whose output is the run's
``final_answer`` and whose status is the run's ``status``; an ``llm_call`` is a model call (its
model, its tokens when the payload has them, its duration when it has one); a ``tool_call`` is a
tool call with its ``action_input``, ``observation`` and ``failure`` flag; a ``parse_error`` or
``plan_error`` is a failure; a ``replan`` is counted; a ``checkpoint`` is a snapshot; a
``file_backup`` is a file write; every other event is counted as an event."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import Source, iter_lines, open_source

from ..jsonvalue import JSONValue
from . import _common, ours
from ._checks import BadEntry, flatten, mapping, text
from .protocol import Session
from .records import Event, Heading, SpanRecord

NAME = "dm-code-agent"
RUN_START = "run_start"
RUN_END = "run_end"
RUN_ERROR = "run_error"
CHECKPOINT = "checkpoint"
FORK = "fork"
END_TYPES = frozenset({RUN_END})
SNAPSHOT_TYPES = frozenset({CHECKPOINT})
SNAPSHOT_NAME = CHECKPOINT
SNAPSHOTS_HOLD_CONVERSATION = True  # a checkpoint's state.conversation_history
FORKS_IN_OWN_LINES = True
RECORD_RESUMABLE = "record with dm-agent --checkpoint FILE.jsonl"
_TOOL = frozenset({"tool_call", "step", "observation_truncated", "edit_guard", "edit_noop"})
_SYS = frozenset({"file_backup"})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def matches(raw: dict[str, Any]) -> bool:
    return (
        "event" in raw and "type" not in raw and ("payload" in raw or "run_id" in raw or "timestamp" in raw)
    )


child_files = _common.no_child_files
evicted = _common.not_evicted
evicted_note = _common.no_evicted_note


def layer_of(event: str) -> str:
    if event in _TOOL:
        return "tool"
    if event in _SYS:
        return "sys"
    return "agent"


def parse_timestamp(value: Any) -> int:
    """ISO-8601 (naive means UTC) to nanoseconds since the epoch; 0 (time unknown) when there is
    none or it is not ISO-8601 (DM itself never reads it)."""
    if not isinstance(value, str):
        return 0
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


class Normalizer:
    def __init__(self) -> None:
        self.seq = 0
        self.previous = ""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        event = text(raw, "event", required=True)
        payload = mapping(raw, "payload")
        entry_id = text(raw, "id")
        if entry_id:  # a missing parent is the entry before, as DM reads it
            parent_id = text(raw, "parent_id")
            if parent_id is None:
                parent_id = self.previous
        else:  # pre-2.0: no ids
            entry_id = f"legacy-{self.seq:04d}"
            parent_id = self.previous
        self.seq += 1
        self.previous = entry_id
        entry: dict[str, Any] = {
            "id": entry_id,
            "parent_id": parent_id,
            "type": event,
            "layer": layer_of(event or ""),
            "ts": parse_timestamp(raw.get("timestamp")),
            "run_id": text(raw, "run_id"),
        }
        return flatten(entry, payload)


def normalizer(source: Source | None) -> Normalizer:
    return Normalizer()


def measured_seconds(value: Any) -> float | None:
    """A duration DM measured (``run_end``'s ``duration_seconds``): a number, else none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        return None
    return float(value)


RUN_SECONDS = ("duration_seconds", "duration", "duration_s")  # DM writes the first


def run_end_facts(entry: dict[str, Any]) -> tuple[str, float | None]:
    """``(status, duration in seconds)`` of a ``run_end`` (its entry, or its raw payload): the
    agent's own verdict and measure (``duration_seconds``), never the timestamps'."""
    status = entry.get("status")
    took = next((s for s in map(measured_seconds, map(entry.get, RUN_SECONDS)) if s is not None), None)
    return (status if isinstance(status, str) else "" if status is None else str(status)), took


def checkpoint_messages(entry: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The messages a ``checkpoint`` holds (``state.conversation_history``, each ``{role,
    content}``; else a ``messages`` list beside it), or ``None`` when it holds none."""
    state: JSONValue = entry.get("state")
    history: JSONValue = (
        state.get("conversation_history") if isinstance(state, dict) else entry.get("messages")
    )
    if not isinstance(history, list):
        return None
    return [m for m in history if isinstance(m, dict)]


def snapshot(entry: dict[str, Any], snapshot_id: int, events_since_last: int) -> dict[str, Any]:
    """A ``checkpoint`` entry in DevDuck's snapshot shape (what ``LoadedSession.snapshots`` and
    ``resume`` read): its conversation as ``agent_messages``, its task as ``last_query``."""
    state: JSONValue = entry.get("state")
    state = state if isinstance(state, dict) else {}
    messages = checkpoint_messages(entry)
    system = next(
        (m.get("content") for m in messages or () if m.get("role") == "system"),
        None,
    )
    config = state.get("agent_config")
    config = config if isinstance(config, dict) else {}
    step = entry.get("step_number", state.get("step_count"))
    ts = entry.get("ts")
    return {
        "timestamp": ts / 1e9 if isinstance(ts, int) and ts > 0 else 0.0,
        "snapshot_id": snapshot_id,
        "agent_messages_count": len(messages or ()),
        "tools_loaded": [],
        "system_prompt_hash": None,
        "env_vars_redacted": [],
        "cwd": state.get("cwd") if isinstance(state.get("cwd"), str) else None,
        "events_since_last": events_since_last,
        "agent_messages": messages,
        "system_prompt": system,
        "last_query": state.get("task"),
        "last_result": None,
        "model_info": {
            "type": "dm-code-agent",
            "model_id": config.get("model"),
            "provider": config.get("provider"),
        },
        "description": f"checkpoint at step {step}" if step is not None else "checkpoint",
    }


# --- a loaded session -----------------------------------------------------------------------------


def session_id(root: dict[str, Any], archive: dict[str, Any] | None) -> str | None:
    """A ``session_id`` the file carries, else the first entry's ``run_id``."""
    own = _common.session_id(root, archive)
    if own is not None:
        return own
    run_id = root.get("run_id")
    return run_id if isinstance(run_id, str) and run_id else None


def tier(session: Session) -> str:
    """``checkpoint`` when a ``checkpoint`` entry holds the conversation (DM's ``--checkpoint``
    file), else ``trace``."""
    held = any(e.type == CHECKPOINT and checkpoint_messages(e.data) is not None for e in session.events)
    return "checkpoint" if held else "trace"


def metadata(session: Session) -> dict[str, Any]:
    """What ``run_start`` says, with the tier and the last ``run_end``'s status and duration."""
    meta = _common.foreign_metadata(session, NAME)
    end = session.end_event
    meta["tier"] = session.tier
    meta["status"], meta["duration_seconds"] = run_end_facts(end.data) if end else ("", None)
    return meta


def duration(session: Session) -> float | None:
    """The last ``run_end``'s ``duration_seconds`` (DM never reads its timestamps)."""
    end = session.end_event
    return None if end is None else run_end_facts(end.data)[1]


_RUN_OK = (None, "success", "ok", "completed")  # a run span's status as view and export show it


def spans(events: list[Event]) -> list[SpanRecord]:
    """DM's runs (``run_start`` to ``run_end``) and tool calls (one entry each, no duration)."""
    out: list[SpanRecord] = []
    run: SpanRecord | None = None
    for e in events:
        if e.type == RUN_START:
            run = SpanRecord(e.id, str(e.data.get("run_id") or ""), "run", "agent", None, e.timestamp_ns)
            run.entry_id, run.parent_entry_id = e.id, e.parent_id
            out.append(run)
        elif e.type in (RUN_END, RUN_ERROR) and run is not None:
            run.end_ns = e.timestamp_ns
            failed = e.type == RUN_ERROR or e.data.get("status") not in _RUN_OK
            run.status = fmt.STATUS_ERROR if failed else fmt.STATUS_OK
            run = None
        elif e.type == "tool_call":
            action = e.data.get("action")
            rec = SpanRecord(
                span_id=e.id,
                trace_id=str(e.data.get("run_id") or ""),
                name=f"execute_tool {action}" if isinstance(action, str) else "execute_tool",
                layer="tool",
                parent_span_id=None if run is None else run.span_id,
                start_ns=e.timestamp_ns,
                end_ns=e.timestamp_ns,
                status=fmt.STATUS_ERROR if e.data.get("failure") or e.data.get("failed") else fmt.STATUS_OK,
                content={
                    "tool_arguments": e.data.get("action_input"),
                    "tool_result": e.data.get("observation"),
                },
                entry_id=e.id,
                parent_entry_id=e.parent_id,
            )
            out.append(rec)
    return out


def snapshots(events: list[Event]) -> list[dict[str, Any]]:
    """The ``checkpoint`` entries, numbered from 1, each with its conversation."""
    out: list[dict[str, Any]] = []
    since = 0
    for event in events:
        if event.type in SNAPSHOT_TYPES:
            out.append(snapshot(event.data, len(out) + 1, since))
            since = 0
        else:
            since += 1
    return out


def conversation(session: Session, until: str | None) -> list[dict[str, Any]]:
    """The ``message`` entries since the run's latest ``run_start``."""
    return _common.messages_since(session, until, lambda e: [] if e.type == RUN_START else None)


# --- resume and fork ---------------------------------------------------------------------------


def unresumable(session: Session) -> str | None:
    """A ``--trace`` file (no ``checkpoint`` holding the conversation) has nothing to resume."""
    if session.tier == "checkpoint":
        return None
    return (
        "a DM-Code-Agent --trace file has no checkpoint entry, so no conversation to resume: "
        + RECORD_RESUMABLE
    )


def fork_name(session: Session, point: str) -> str:
    """``<source stem>.fork-<point>.jsonl``, as DM names a branch (``dm-agent-trace fork``)."""
    return f"{session.path.stem}.fork-{point}{fmt.JSONL_SUFFIX}"


def fork_lines(session: Session, point: str) -> Iterator[bytes]:
    """A branch as DM forks it: its own lines up to and including ``point``, each as DM loads it
    (an entry without an id gets its ``legacy-NNNN`` one, a missing parent the entry before), keys
    sorted as DM writes them, read again from the file a line at a time; then DM's ``fork`` entry
    ``{source, forked_from_entry_id, entry_count}`` under the point, by a writer of its own (a
    new run id)."""
    normalizer = Normalizer()
    count = 0
    with open_source(session.path) as source:
        for _, raw in iter_lines(source.stream, source.name, issues=[]):
            try:
                entry = normalizer.normalize(raw)
            except BadEntry:
                continue  # as the loaded session skipped it
            line = dict(raw)
            if not line.get("id"):
                line["id"] = entry["id"]
            if line.get("parent_id") is None:
                line["parent_id"] = entry["parent_id"]
            count += 1
            yield _dm_line(line)
            if entry["id"] == point:
                break
    run_id = uuid.uuid4().hex
    yield _dm_line(
        {
            "id": f"{run_id[:8]}-0001",
            "parent_id": point,
            "timestamp": datetime.now(timezone.utc).isoformat(),
            "run_id": run_id,
            "event": FORK,
            "payload": {"source": str(session.path), "forked_from_entry_id": point, "entry_count": count},
        }
    )


def heading(first: dict[str, Any], file_base: str) -> Heading | None:
    """A run's file, named by its ``run_id``; a fork (a file of its own, beginning as its source
    does) by its file's name. Its end is its last ``run_end``, looked for far back (a run's
    checkpoints may follow it)."""
    if "event" not in first or "payload" not in first or "type" in first:
        return None
    sid = file_base if ".fork-" in file_base else first.get("run_id")
    return Heading(sid if isinstance(sid, str) else None, first.get("timestamp"), b'"run_end"', 64 << 20)


def listed_end(entry: dict[str, Any]) -> tuple[float | None, str] | None:
    """The last ``run_end``'s duration and status."""
    if entry.get("event") != RUN_END:
        return None
    payload: JSONValue = entry.get("payload")
    status, took = run_end_facts(payload if isinstance(payload, dict) else {})
    return took, status


def matches_archive(metadata: dict[str, Any]) -> bool:
    return False  # DM writes no ZIP


def _dm_line(entry: dict[str, Any]) -> bytes:
    return (json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode()


# --- as our entries (the analysis) --------------------------------------------------------------

_OK_STATUSES = frozenset(
    {None, "", "success", "succeeded", "ok", "completed", "complete", "done", "finished"}
)


def _reason(entry: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value: JSONValue = entry.get(key)
        if value not in (None, "", False):
            return (
                ours.text(value) if not isinstance(value, dict) else ours.text(value.get("message") or value)
            )
    return ""


def _tokens(entry: dict[str, Any]) -> dict[str, int]:
    """Token counts an ``llm_call`` carries (real ones only: an estimate is not a count)."""
    usage: JSONValue = entry.get("usage")
    sources: list[dict[str, Any]] = [usage, entry] if isinstance(usage, dict) else [entry]
    out: dict[str, int] = {}
    for source in sources:
        tokens_in = ours.integer(source, "input_tokens", "prompt_tokens")
        tokens_out = ours.integer(source, "output_tokens", "completion_tokens")
        if tokens_in is not None and semconv.GEN_AI_USAGE_INPUT_TOKENS not in out:
            out[semconv.GEN_AI_USAGE_INPUT_TOKENS] = tokens_in
        if tokens_out is not None and semconv.GEN_AI_USAGE_OUTPUT_TOKENS not in out:
            out[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = tokens_out
    return out


def as_ours(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A DM-Code-Agent session's entries (as :class:`Normalizer` makes them) as ours."""
    text_ = ours.text
    started = False
    start_ts = 0
    meta: dict[str, Any] = {}
    model = ""
    provider = ""
    run: tuple[str, int] | None = None  # the running run's span id and start time
    for entry in entries:
        event = entry.get("type")
        ts = entry.get("ts") or 0
        if not started:
            started, start_ts = True, ts
            session = text_(entry.get("run_id")) or text_(entry.get("id"))
            yield ours.session_start(entry, session, NAME, meta)
        if event in ("runtime", RUN_START):
            own = ours.own(entry)
            meta.update(own)  # the session's metadata, as the run tells it
            if event == "runtime" or "model" in own or "provider" in own:
                model = text_(own.get("model")) or model
                provider = text_(own.get("provider")) or provider
            if event == RUN_START:
                run = (entry["id"], ts)
                yield ours.span_start(
                    entry,
                    "invoke_agent dm-agent",
                    fmt.LAYER_AGENT,
                    {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT},
                )
        elif event == fmt.MESSAGE:
            yield ours.message(entry, "content")
        elif event == "llm_call":
            name = text_(entry.get("model")) or model or provider or "model"
            attrs: dict[str, Any] = {
                semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT,
                semconv.GEN_AI_REQUEST_MODEL: name,
                **_tokens(entry),
            }
            if provider:
                attrs[semconv.GEN_AI_PROVIDER_NAME] = provider
            why = _reason(entry, "error", "exception")
            yield ours.span_end(
                entry,
                f"chat {name}",
                fmt.LAYER_AGENT,
                attrs,
                parent=run and run[0],
                duration=ours.seconds_ns(
                    entry, ("duration", "duration_s", "latency_s"), ("duration_ms", "latency_ms")
                ),
                error=why or None,
            )
        elif event == "tool_call":
            action = text_(entry.get("action")) or "tool"
            failed = bool(entry.get("failure") or entry.get("failed") or entry.get("error"))
            observation = entry.get("observation")
            yield ours.span_end(
                entry,
                f"execute_tool {action}",
                fmt.LAYER_TOOL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: action},
                parent=run and run[0],
                duration=ours.seconds_ns(entry, ("duration", "duration_s"), ("duration_ms",)),
                error=(_reason(entry, "error") or text_(observation)[:300] or "failed") if failed else None,
                content={"tool_arguments": entry.get("action_input"), "tool_result": observation},
            )
        elif event == "parse_error":
            why = _reason(entry, "error", "message", "reason") or "the model's response could not be parsed"
            yield ours.failure(entry, ours.PARSE_FAILED, "model:" + (model or provider or "model"), why)
        elif event == "plan_error":
            why = _reason(entry, "error", "message", "reason") or "planning failed"
            yield ours.failure(entry, ours.PLAN_FAILED, "plan", why)
        elif event == "replan":
            yield ours.replan(entry)
        elif event in (RUN_END, RUN_ERROR):
            status = entry.get("status")
            error = None
            if event == RUN_ERROR:
                error = _reason(entry, "error", "exception", "message") or RUN_ERROR
            elif not (status is None or isinstance(status, str) and status.lower() in _OK_STATUSES):
                error = f"status {text_(status)}"
                detail = _reason(entry, "error", "reason")
                if detail:
                    error += f": {detail}"
            content = {"agent_output": entry["final_answer"]} if "final_answer" in entry else None
            measured = ours.seconds_ns(entry, RUN_SECONDS, ("duration_ms",))  # the agent's own
            if run is not None:
                took = measured or (max(ts - run[1], 0) if ts and run[1] else 0)
                end = ours.span_end(
                    entry,
                    "invoke_agent dm-agent",
                    fmt.LAYER_AGENT,
                    {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT},
                    span_id=run[0],
                    duration=took,
                    error=error,
                    content=content,
                )
                end["id"] = entry["id"]
                yield end
                run = None
            yield ours.session_end(entry, measured or (max(ts - start_ts, 0) if ts and start_ts else 0), 0)
        elif event == CHECKPOINT:
            yield ours.snapshot(entry)
        elif event == "file_backup":
            path = text_(entry.get("path") or entry.get("file") or entry.get("source"))
            yield ours.event(entry, "file.write", fmt.LAYER_SYS, run and run[0], {"file.path": path})
        else:
            yield ours.event(
                entry, text_(event), text_(entry.get("layer")) or fmt.LAYER_AGENT, run and run[0], {}
            )
