"""A span's full-fidelity content (messages, tool arguments and results, a model call's system
prompt and tools), held off the span until it ends, then written in its ``span.end`` entry per
tier: messages as ids of message entries, carried keys only when they changed."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import report_once

from .message_store import MessageStore
from .tier_state import TierState, by_reference, frozen
from .tiers import CHECKPOINT_ONLY_KEYS, MESSAGE_KEYS

MAX_PENDING = 10_000  # spans in flight holding content


class SpanContent:
    """The content of spans in flight, by span id (bounded), and how each tier writes it."""

    def __init__(self, store: MessageStore):
        self._store = store
        self.pending: dict[int, dict[str, Any]] = {}

    def attach(self, span_id: int, content: dict[str, Any]) -> None:
        """Add content to a span's (the caller holds the recorder's lock)."""
        current = self.pending.get(span_id)
        if current is None:
            if len(self.pending) >= MAX_PENDING:
                report_once("content-cap", "otel-agent-trace: too many unfinished spans with content")
                return
            self.pending[span_id] = dict(content)
        else:
            current.update(content)

    def fields(
        self, tier: TierState, parent_id: str, span_hex: str, content: dict[str, Any]
    ) -> dict[str, Any]:
        """A span's ``content`` as one tier writes it; its new messages are written under
        ``parent_id`` first. Empty when all it had is checkpoint-only and the tier is not."""
        out: dict[str, Any] = {}
        same: list[str] = []
        sid = int(span_hex, 16)
        for key, value in content.items():
            if key in MESSAGE_KEYS and isinstance(value, list):
                known = _snapshot_ids(tier, sid, key, value)
                if known is None:
                    ids = self._store.message_ids(
                        tier, value, parent_id, sid, remember=key == "input_messages"
                    )
                    known = ids, 0
                out[key[:-1] + "_ids"] = by_reference(tier.snapshot, *known)
                continue
            if key in fmt.CONTENT_CARRIED:  # a model call's system prompt, tool definitions
                raw = frozen(value)
                if raw is not None and tier.content_raw.get(key) == raw:
                    same.append(key)  # as the last model call's, before it was shown: not repeated
                    continue
                shown = tier.policy.content_value(key, value)
                tier.content_raw[key] = raw
                # As shown now, not the shown object: that may be the agent's, changed in place since.
                said = frozen(shown)
                if said is not None and tier.content.get(key) == said:
                    same.append(key)  # as the last model call said: not repeated
                    continue
                tier.content[key] = said
            elif key in CHECKPOINT_ONLY_KEYS and not tier.policy.full:
                continue  # never in a shareable tier, not even as a preview
            else:
                shown = tier.policy.content_value(key, value)
            out[key] = shown
        if same:
            out["same"] = same
        return out


def _snapshot_ids(tier: TierState, sid: int, key: str, messages: list[Any]) -> tuple[list[Any], int] | None:
    """The ids of a model call's input or output messages as its automatic snapshot found them
    (``TierState.span_messages``), and how many of them lead the file's latest snapshot's ids (the
    inputs' all, when that is the snapshot they are from: not compared again); ``None`` when they
    are not known so."""
    known = tier.span_messages
    if known is None or known.span_id != sid:
        return None
    if key == "input_messages" and messages is known.inputs and len(messages) == known.n_inputs:
        n_in = known.n_inputs
        latest = tier.snapshot is not None and tier.snapshot.message_ids is known.ids
        return known.ids[:n_in], n_in if latest else 0
    if key == "output_messages" and messages is known.outputs and len(messages) == known.n_outputs:
        return known.ids[known.n_inputs :], 0
    return None
