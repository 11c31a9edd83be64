"""A history an agent can take: cut back to the last complete turn, where every tool call has
its result (a model's call with none yet, a result of a call never made, or a message the file
does not hold ends it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from otel_agent_trace.session_format.shapes.neutral import result_ids, tool_calls

from .conversation import conversation_at
from .errors import ResumeError

if TYPE_CHECKING:
    from .session import Session


@dataclass
class Context:
    """A conversation that can be handed to an agent: every tool call with its result."""

    messages: list[dict[str, Any]]
    entry_id: str
    cut: str | None = None  # why the messages after the last complete turn were left out
    dropped: int = 0


def _cut_point(messages: list[dict[str, Any]]) -> tuple[int, str] | None:
    """Where a history stops being valid for a framework: a message the file does not hold, a
    tool call with no result after it, a result for a call never made."""
    made: set[Any] = set()
    for index, message in enumerate(messages):
        if message.get("missing"):
            return index, f"message {message['missing']} is not in the file"
        for rid in result_ids(message):
            if rid and rid not in made:
                return index, f"a tool result ({rid}) for a call made before this part of the recording"
        calls = tool_calls(message)
        if calls:
            later = {i for m in messages[index + 1 :] for i in result_ids(m)}
            missing = [c for c in calls if not c.get("id") or c["id"] not in later]
            if missing:
                named = ", ".join(f"{c.get('name')} ({c.get('id')})" for c in missing)
                return index, f"the model's call of {named} has no result at this entry"
            made.update(c["id"] for c in calls)
    return None


def valid_history(messages: list[dict[str, Any]], entry_id: str = "") -> Context:
    """``messages`` cut back to the last complete turn: before the first model message whose tool
    calls have no result (an agent given it would fail, send the call unanswered or run the tool
    again), or the first message the file does not hold."""
    found = _cut_point(messages)
    if found is None:
        return Context(list(messages), entry_id)
    index, why = found
    kept = messages[:index]
    return Context(
        kept,
        entry_id,
        f"cut back to the last complete turn ({len(kept)} of {len(messages)} messages): {why}",
        len(messages) - index,
    )


def resumable_context(session: Session, at: str | None = None) -> Context:
    """The conversation at entry ``at`` (default: the end) as an agent can take it up: with the
    tool results recorded by then, cut back to the last complete turn where a call has none yet."""
    check_resumable(session)
    messages, index = conversation_at(session, at)
    return valid_history(messages, session.events[index].id)


def check_resumable(session: Session) -> None:
    """A :class:`ResumeError` when the session's format says it holds no conversation to resume
    (a trace-tier recording of ours keeps message text only as hashes)."""
    why = session.format.unresumable(session)
    if why is not None:
        raise ResumeError(f"{session.path}: {why}")
