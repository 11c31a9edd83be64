"""Snapshots: the conversation state at a moment (messages by id, system prompt, model, tools,
working directory), written per tier by reference to the file's previous snapshot: only what
changed is said again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otel_agent_trace import session_format as fmt

from .message_store import MessageStore
from .tier_state import LatestSnapshot, SpanMessages, TierState, by_reference, frozen


class SnapshotRequest:
    """What one snapshot records, as the caller hands it over."""

    __slots__ = (
        "description",
        "messages",
        "system_prompt",
        "state",
        "last_query",
        "last_result",
        "model_info",
        "tools_loaded",
        "auto",
        "span_messages",
    )

    def __init__(
        self,
        description: str,
        messages: list[Any],
        system_prompt: str | None,
        state: dict[str, Any] | None,
        last_query: Any,
        last_result: Any,
        model_info: dict[str, Any] | None,
        tools_loaded: list[str] | None,
        auto: bool,
        span_messages: tuple[list[Any], list[Any]] | None,
    ):
        self.description = description or ""
        self.messages = messages
        self.system_prompt = system_prompt
        self.state = state
        self.last_query = last_query
        self.last_result = last_result
        self.model_info = model_info or {}
        self.tools_loaded = list(tools_loaded or [])
        self.auto = auto
        self.span_messages = span_messages


class Snapshots:
    """Writes snapshots into every tier's file (``tiers``: the recorder's list)."""

    def __init__(self, store: MessageStore, tiers: list[TierState], cwd: Callable[[], str]):
        self._store = store
        self._tiers = tiers
        self._cwd = cwd
        self._last_cwd: str | None = None

    def working_directory(self) -> str | None:
        """The process's working directory now (an agent may change it between snapshots); the
        last one known when it is gone (removed while the process was in it, where ``getcwd``
        raises), ``None`` when none is known."""
        try:
            self._last_cwd = self._cwd()
        except OSError:
            pass
        return self._last_cwd

    def write(
        self, snapshot_id: int, ts: int, request: SnapshotRequest, span: Any, parents: list[str]
    ) -> None:
        """Write snapshot ``snapshot_id`` in each tier's file under that tier's entry in
        ``parents``. The caller holds the recorder's lock. ``span``: the span it is about (its ids
        are named unless it hangs under that span's open start)."""
        store = self._store
        sid = span.get_span_context().span_id if span is not None else None
        system_prompt = request.system_prompt
        system_sha = store.system_sha256(system_prompt) if system_prompt else None
        cwd = self.working_directory()
        # The fields whose showing costs (redaction, hashing), as they are before it: a field
        # as it was in the file's previous snapshot is taken from there.
        raw = {
            "description": request.description,
            "system_prompt": frozen(system_prompt),
            "model_info": frozen(request.model_info),
            "cwd": cwd,
        }
        for tier, parent in zip(self._tiers, parents, strict=True):
            w = tier.writer
            message_ids = store.message_ids(tier, request.messages, parent, sid, remember=True)
            previous = tier.snapshot
            # The leading ids known equal to the previous snapshot's (taken from its list).
            known, same_ids = tier.prefix
            same_ids = same_ids if previous is not None and known is previous.message_ids else 0
            carried = _carried(tier, request, system_sha, cwd, raw, previous)
            fields: dict[str, Any] = {
                "type": fmt.SNAPSHOT,
                "layer": fmt.LAYER_AGENT,
                "ts": ts,
                "snapshot_id": snapshot_id,
            }
            if previous is None:
                fields.update(carried)
            else:  # what is as in the previous snapshot is said there
                fields["prev"] = previous.entry_id
                before = previous.carried
                for key, value in carried.items():
                    if key not in before or before[key] != value:
                        fields[key] = value
            fields["message_ids"] = by_reference(previous, message_ids, same_ids)
            fields["messages_count"] = len(message_ids)
            fields["entries_before"] = w.entries
            if request.state is not None:
                fields["state"] = tier.policy.content_value("state", request.state)
            if span is not None and w.live_entry(sid) != parent:  # else: its parent's span
                ctx = span.get_span_context()
                fields["trace_id"] = f"{ctx.trace_id:032x}"
                fields["span_id"] = f"{ctx.span_id:016x}"
            written = w.write(parent, fields, snapshot=True)
            if written is not None:
                tier.snapshot = LatestSnapshot(written, message_ids, carried)
                tier.snapshot_raw = raw
            tier.span_messages = None
            if request.span_messages is not None and sid is not None:
                inputs, outputs = request.span_messages
                if len(inputs) + len(outputs) == len(message_ids):
                    tier.span_messages = SpanMessages(
                        sid, inputs, len(inputs), outputs, len(outputs), message_ids
                    )


def _carried(
    tier: TierState,
    request: SnapshotRequest,
    system_sha: str | None,
    cwd: str | None,
    raw: dict[str, Any],
    previous: LatestSnapshot | None,
) -> dict[str, Any]:
    """A snapshot's carried fields as the tier shows them; a costly field as it was before it
    was shown in the previous snapshot is taken from there, not shown again."""
    same = _same_fields(raw, tier.snapshot_raw) if previous is not None else ()
    before = previous.carried if previous is not None else {}
    policy = tier.policy
    return {
        "description": before["description"] if "description" in same else policy.text(request.description),
        "auto": request.auto,
        "system_prompt": before["system_prompt"]
        if "system_prompt" in same
        else policy.content_value("system_prompt", request.system_prompt),
        "system_prompt_sha256": system_sha,
        "last_query": policy.content_value("last_query", request.last_query),
        "last_result": policy.content_value("last_result", request.last_result),
        "model_info": before["model_info"] if "model_info" in same else policy.value(request.model_info),
        "tools_loaded": list(request.tools_loaded),
        "cwd": before["cwd"] if "cwd" in same else None if cwd is None else policy.text(cwd),
    }


def _same_fields(raw: dict[str, Any], before: dict[str, Any]) -> tuple[str, ...]:
    """The fields of ``raw`` (see :func:`frozen`) that are as in ``before``."""
    return tuple(name for name, value in raw.items() if value is not None and before.get(name) == value)
