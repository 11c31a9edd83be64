"""DM-Code-Agent's JSONL session: ``{"id", "parent_id", "timestamp" (ISO-8601 UTC), "run_id",
"event", "payload"}``. Files written before schema 2.0 have no ids: they get ``legacy-0000``,
``legacy-0001``, … by position, each under the one before. ``payload``'s fields go beside ours.

DM never parses ``timestamp`` (its own tests write ``"t0"``; order is file order, durations come
from ``run_end``'s ``duration_seconds``): a timestamp that is not ISO-8601 is read as no time
(``ts`` 0), never refused. A run's status and duration are the **last** ``run_end``'s
(:func:`run_end_facts`), as DM's summary takes them.

A ``checkpoint`` entry (``{step_number, state}``) holds the conversation in
``state.conversation_history``: it is a snapshot (:func:`snapshot`), and a file that has one is
DM's checkpoint tier (``--checkpoint``), resumable at its last checkpoint or at the latest one at or
before an entry, as ``dm-agent --resume FILE --resume-at ID`` does."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ._checks import flatten, mapping, text

NAME = "dm-code-agent"
RUN_END = "run_end"
CHECKPOINT = "checkpoint"
FORK = "fork"
END_TYPES = frozenset({RUN_END})
SNAPSHOT_TYPES = frozenset({CHECKPOINT})
_TOOL = frozenset({"tool_call", "step", "observation_truncated", "edit_guard", "edit_noop"})
_SYS = frozenset({"file_backup"})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def matches(raw: dict[str, Any]) -> bool:
    return (
        "event" in raw and "type" not in raw and ("payload" in raw or "run_id" in raw or "timestamp" in raw)
    )


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


def conversation(entry: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The messages a ``checkpoint`` holds (``state.conversation_history``, each ``{role,
    content}``; else a ``messages`` list beside it), or ``None`` when it holds none."""
    state = entry.get("state")
    history = state.get("conversation_history") if isinstance(state, dict) else entry.get("messages")
    if not isinstance(history, list):
        return None
    return [m for m in history if isinstance(m, dict)]


def snapshot(entry: dict[str, Any], snapshot_id: int, events_since_last: int) -> dict[str, Any]:
    """A ``checkpoint`` entry in DevDuck's snapshot shape (what ``LoadedSession.snapshots`` and
    ``resume`` read): its conversation as ``agent_messages``, its task as ``last_query``."""
    state = entry.get("state")
    state = state if isinstance(state, dict) else {}
    messages = conversation(entry)
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
