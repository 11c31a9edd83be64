"""Conversation messages, content-addressed: each message is written once per file as a
``message`` entry found by the SHA-256 of its canonical JSON, and a resent conversation is
recognised by position (compared in C) or by key, without hashing it again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.own_messages import OwnMessages
from otel_agent_trace.session_format.alignment import Alignment, align

from .tier_state import Conversation, TierState, frozen

# Remembered message digests (MessageStore.digest_of): at most this many, holding at most this
# many characters of message text alive; past either, all are forgotten (and hashed again once).
KNOWN_MESSAGES = 16_384
KNOWN_CHARS = 32 * 1024 * 1024

UNEQUAL = object()  # equal to no message
_STR_TYPE = frozenset({str})
_STR_OR_NONE = frozenset({str, type(None)})


class MessageStore:
    """The message entries of every tier's file, and the digests remembered by message key
    (bounded). ``tiers`` is the recorder's list (the first tier counts what is written)."""

    def __init__(self, clock: Callable[[], int], counts: dict[str, int], tiers: list[TierState]):
        self._clock = clock
        self._counts = counts
        self._tiers = tiers
        # Message key → digest (see message_keys), and the characters those keys hold (bounded).
        self._digests: dict[Any, str] = {}
        self._digest_chars = 0
        self._system_digest: tuple[str, str] | None = None  # (system prompt, its digest)

    def __len__(self) -> int:
        """How many digests are remembered."""
        return len(self._digests)

    def message_ids(
        self, tier: TierState, messages: list[Any], parent_id: str, span_id: int | None, *, remember: bool
    ) -> list[str | None]:
        """The message entries of ``messages`` in one file, written for those it does not hold
        yet. The caller holds the recorder's lock. Each message is compared with the one at its
        position in the conversation this file saw last (``tier.recent``, lined up again after a
        sliding window: ``alignment.align``): the leading ones at once, in C, the others by
        identity when the capture hands its own copies (an ``OwnMessages``, kept as they are), else
        by equality with a plain copy. One found as it was takes its id: a resent conversation
        costs about one pass in C and nothing is hashed, so a call's cost does not grow with the
        conversation, whatever its messages hold. The others are looked up by key (see :meth:`digest_of`).
        ``remember``: this is the conversation to compare the next one with."""
        copies, known_ids = tier.recent
        own = type(messages) is OwnMessages
        count = len(messages)
        try:
            found = align(messages, copies, identity=own)
        except Exception:  # an odd object's comparison (not a message of ours): none is as it was
            found = Alignment(0, list(range(min(count, len(copies)))), 0, 0)
        if found.dropped:  # (a sliding window: the rest lines up again without them)
            copies, known_ids = found.kept(copies), found.kept(known_ids)
        prefix = found.prefix
        length = min(count, len(copies))
        tier.prefix = (known_ids, prefix)
        if prefix == count:
            ids = known_ids[:count]
            if remember:
                tier.recent = Conversation(copies[:count], ids)
            return ids
        todo = found.changed + list(range(length, count))
        ids = known_ids[:length]
        ids += [None] * (count - length)
        if remember:
            copies = copies[:length]
            copies += [UNEQUAL] * (count - length)
        rest = [messages[index] for index in todo]
        keys = message_keys(rest)
        entries = _lookup(tier.known, keys)
        for index, message, key, entry in zip(todo, rest, keys, entries, strict=True):
            if entry is None:
                entry = self.message_entry(tier, message, parent_id, span_id, key)
            ids[index] = entry
            if remember:
                copies[index] = UNEQUAL if entry is None else message if own else _plain_copy(message)
        if remember:
            tier.recent = Conversation(copies, ids)
        return ids

    def message_entry(
        self, tier: TierState, message: Any, parent_id: str, span_id: int | None, key: Any = None
    ) -> str | None:
        """The entry of one message in one file, written (under ``parent_id``) if it holds none."""
        if not isinstance(message, dict):
            message, key = {"role": "unknown", "content": message}, None
        digest, remembered = self.digest_of(message, key)
        w = tier.writer
        found = w.message_entry(digest)
        if found is None:
            fields = {"type": fmt.MESSAGE, "layer": fmt.LAYER_AGENT, "ts": self._clock(), "digest": digest}
            if span_id is not None and w.live_entry(span_id) != parent_id:  # else: its parent's span
                fields["span_id"] = f"{span_id:016x}"
            fields.update(tier.policy.message(message, fmt.content_sha256(message.get("content"))))
            if tier is self._tiers[0]:  # counted once, however many tiers are written
                self._counts["messages"] += 1
            found = w.write(parent_id, fields, message=digest)
        if found is not None and remembered:
            tier.known[key] = found
        return found

    def digest_of(self, message: dict[str, Any], key: Any) -> tuple[str, bool]:
        """The SHA-256 of a message's canonical JSON, and whether it is remembered by ``key``.
        Remembered when the key stands for the message exactly (every key a ``str``, every value
        a ``str`` or ``None``: two such keys are equal exactly when the messages' canonical JSON
        is), or when it is the message's JSON (a message holding a list, a dict or a number: see
        :func:`message_keys`; orjson, in C, is cheaper than the canonical JSON and its hash). A
        message changed in place has another key or JSON, so it is hashed again."""
        remembered = True
        if key is not None:
            try:
                found = self._digests.get(key)
            except TypeError:  # unhashable
                key, remembered = frozen(message), False
                found = self._digests.get(key) if key is not None else None
            if found is not None:
                return found, remembered
        digest = fmt.content_sha256(message)
        chars = _plain_chars(key) if key is not None else -1
        if chars < 0:
            return digest, False
        if len(self._digests) >= KNOWN_MESSAGES or self._digest_chars + chars > KNOWN_CHARS:
            self.forget()
        self._digests[key] = digest
        self._digest_chars += chars
        return digest, remembered

    def system_sha256(self, text: Any) -> str:
        """The SHA-256 of a system prompt (the last one's remembered: most calls resend it)."""
        last = self._system_digest
        if last is not None and (last[0] is text or (type(text) is str and last[0] == text)):
            return last[1]
        digest = fmt.content_sha256(text)
        if type(text) is str:
            self._system_digest = (text, digest)
        return digest

    def forget(self) -> None:
        """Drop the remembered message digests and entries (bounded memory: the keys hold the
        messages' text alive)."""
        self._digests.clear()
        self._digest_chars = 0
        for tier in self._tiers:
            tier.known.clear()


def message_keys(messages: list[Any]) -> list[Any]:
    """Each message's key (see :func:`message_key`)."""
    return [message_key(message) for message in messages]


def message_key(message: Any) -> Any:
    """A message's key, always hashable: its items as a tuple when its values are all ``str`` or
    ``None`` (most messages), else its JSON (:func:`frozen`: a message holding tool calls, content
    parts or numbers), ``None`` for one that is neither a dict nor JSON. Either stands for the
    message exactly (see :meth:`MessageStore.digest_of`)."""
    if not isinstance(message, dict):
        return None
    fields: dict[Any, Any] = message
    if _STR_OR_NONE.issuperset(map(type, fields.values())):
        return tuple(fields.items())
    return frozen(fields)


def _plain_copy(message: Any) -> Any:
    """A copy of a message whose keys are all ``str`` and values all ``str`` or ``None`` (equal to
    another message exactly when their canonical JSON is); ``UNEQUAL`` for any other."""
    if type(message) is not dict or _plain_chars(tuple(message.items())) < 0:
        return UNEQUAL
    return dict(message)


def _lookup(known: dict[Any, str], keys: list[Any]) -> list[str | None]:
    """``known.get`` of each key, in C; an unhashable key (a message holding a list or dict) is not
    found. Such keys are found by halving, so a few of them cost a few passes, not a loop."""
    try:
        return list(map(known.get, keys))
    except TypeError:
        if len(keys) == 1:
            return [None]
        middle = len(keys) // 2
        return _lookup(known, keys[:middle]) + _lookup(known, keys[middle:])


def _plain_chars(key: Any) -> int:
    """The characters of a message key whose keys are all ``str`` and values all ``str`` or
    ``None`` (a key that stands for its message's canonical JSON exactly), or of a message's JSON
    (bytes); -1 for any other key."""
    if type(key) is bytes:
        return len(key)
    if not key:
        return 0
    names, values = zip(*key, strict=True)  # (all in C)
    if set(map(type, names)) <= _STR_TYPE and set(map(type, values)) <= _STR_OR_NONE:
        return sum(map(len, filter(None, values)))
    return -1
