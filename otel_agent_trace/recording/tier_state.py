"""One tier's file as the recorder writes it: its writer, its policy, and what it has said so far
(the latest snapshot, carried content, messages known by key), so that nothing is said twice."""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from otel_agent_trace.session_format.references import reference

from .tiers import TierPolicy
from .writer import TierWriter


class LatestSnapshot(NamedTuple):
    """A file's latest snapshot: its entry id, its message ids and its carried fields as shown."""

    entry_id: str
    message_ids: list[Any]
    carried: dict[str, Any]


class Conversation(NamedTuple):
    """The conversation a file saw last: a plain copy of each message (``UNEQUAL`` for one that
    is not plain, or the capture's own object) and its message entry id."""

    copies: list[Any]
    ids: list[str | None]


class SpanMessages(NamedTuple):
    """A model call's input and output lists as its automatic snapshot took them (the very
    lists its span content holds), and the snapshot's message ids: the span's end takes its ids
    from here instead of comparing the conversation again."""

    span_id: int
    inputs: list[Any]
    n_inputs: int
    outputs: list[Any]
    n_outputs: int
    ids: list[Any]


class TierState:
    """A writer, the policy of what its tier keeps (``show``: a span's name and attributes as the
    tier keeps them, the policy's bound method, looked up once), and what the file has said."""

    __slots__ = (
        "writer",
        "policy",
        "show",
        "snapshot",
        "content",
        "known",
        "recent",
        "snapshot_raw",
        "content_raw",
        "span_messages",
        "prefix",
    )

    def __init__(self, writer: TierWriter, policy: TierPolicy):
        self.writer = writer
        self.policy = policy
        self.show = policy.span
        # The file's latest snapshot, for the next snapshot and message-id lists written by
        # reference to it.
        self.snapshot: LatestSnapshot | None = None
        # The latest value of each carried content key in the file (fmt.CONTENT_CARRIED), as
        # written (see frozen).
        self.content: dict[str, Any] = {}
        # Message key (see message_store.message_keys) → its message entry in this file: a message
        # sent again costs a dict lookup. Cleared with the store's digests (MessageStore.forget).
        self.known: dict[Any, str] = {}
        # The conversation this file saw last (MessageStore.message_ids).
        self.recent = Conversation([], [])
        # What the fields of the latest snapshot, and the carried content keys, were before this
        # tier showed them (see frozen): one that is as it was is not shown (redacted, hashed) again.
        self.snapshot_raw: dict[str, Any] = {}
        self.content_raw: dict[str, Any] = {}
        # The latest automatic snapshot's messages as its model call's span content holds them.
        self.span_messages: SpanMessages | None = None
        # The ids list of ``recent`` the latest message_ids compared with, and how many of its
        # leading ids the messages took (so a list of ids built then starts with those).
        self.prefix: tuple[list[Any], int] = ([], 0)


def frozen(value: Any) -> Any:
    """A value as it is now, to tell later whether it is still so: a ``str`` itself, anything else
    its JSON (``None`` when it has none: never taken as unchanged)."""
    if type(value) is str:
        return value
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return None


def by_reference(snapshot: LatestSnapshot | None, ids: list[Any], same: int = 0) -> Any:
    """A list of message ids as written: by reference to the file's latest snapshot when that is
    shorter (``session_format.references``: its first ``n`` ids, or runs of them, then what is
    new), so a growing conversation, or one kept in a sliding window, adds only its new ids to the
    file. ``same``: how many leading ids are known to be the snapshot's (not compared again)."""
    if snapshot is None:
        return ids
    return reference(snapshot.entry_id, snapshot.message_ids, ids, same)
