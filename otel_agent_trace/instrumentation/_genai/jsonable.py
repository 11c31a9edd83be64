"""Turning SDK objects (pydantic models, ``Omit`` sentinels, iterables) into plain JSON values."""

from __future__ import annotations

import bisect
import copy
import operator
from typing import Any, NamedTuple

import orjson

from otel_agent_trace._internal.own_messages import OwnMessages
from otel_agent_trace.session_format.alignment import align
from otel_agent_trace.session_format.messages import text_of  # noqa: F401 (re-exported)

_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
# Plain JSON only: a dataclass, datetime or subclass of str/int/dict/list makes orjson raise.
_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
_dumps = orjson.dumps


def is_given(value: Any) -> bool:
    """False for the SDKs' ``NOT_GIVEN`` / ``omit`` sentinels and ``None``."""
    if value is None:
        return False
    name = type(value).__name__
    return name not in ("NotGiven", "Omit")


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-compatible value: pydantic models dumped without ``None`` fields, sentinels dropped.
    A dict of strings to scalars is returned as it is (never modified by us): a message object
    the agent sends again is the same object each call (a recorder can know it by identity)."""
    if isinstance(value, _SCALARS):
        return value
    if depth > 40:
        return repr(value)
    if isinstance(value, dict):
        for k, v in value.items():
            if type(k) is not str or not isinstance(v, _SCALARS):
                break
        else:  # already plain JSON (most messages): the object itself, no copy
            return value
        if depth == 0 and _plain(value):  # nested plain JSON (tool calls, parts): checked in C
            return value
        return {str(k): jsonable(v, depth + 1) for k, v in value.items() if is_given(v) or v is None}
    if isinstance(value, (list, tuple)):
        if depth == 0 and type(value) is list and _plain(value):
            return value
        return [jsonable(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:  # (the SDK warns its user of a value its type does not expect; we never warn again)
            dumped = dump(exclude_none=True, mode="json", warnings=False)
        except TypeError:
            return jsonable(dump(), depth + 1)
        return dumped if _plain(dumped) else jsonable(dumped, depth + 1)
    if isinstance(value, (bytes, bytearray)):
        return {"type": "bytes", "size": len(value)}
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        try:
            return [jsonable(v, depth + 1) for v in value]
        except TypeError:
            pass
    return repr(value)


def _plain(value: Any) -> bool:
    """Whether ``value`` is plain JSON already (dicts with ``str`` keys, lists, scalars; no
    sentinel, tuple subclass or model inside): then it needs no copy. One orjson pass in C."""
    try:
        _dumps(value, option=_STRICT)
    except TypeError:  # orjson.JSONEncodeError: a type that is not plain JSON, or too deep
        return False
    return True


# The roles of a system prompt in a chat's messages.
SYSTEM_ROLES = frozenset(("system", "developer"))


def is_system_role(role: Any) -> bool:
    """Whether ``role`` is one of :data:`SYSTEM_ROLES` (any value, an unhashable one too)."""
    return isinstance(role, str) and role in SYSTEM_ROLES


_UNEQUAL = object()  # in place of a message that is not remembered: equal to nothing
_REMEMBER_AT_MOST = 16_384  # messages of the last conversation remembered
_WATCH_AT_MOST = 256  # containers watched in one message (more: it is read again each call)


class _Conversation(NamedTuple):
    """The last conversation, position by position (shared by every thread: only ever compared
    with, so a stale or another thread's one costs time, never correctness)."""

    # Each message as handed on: a copy of ours, nothing of the agent's inside; the very list
    # handed on (nobody changes an OwnMessages).
    copies: list[Any]
    # Each message's role.
    roles: list[Any]
    # What the message sent at that position next is compared with (an item being equal to
    # itself without a comparison): our copy, for a message of plain JSON (equal to it exactly
    # when it is plain JSON equal to what was sent: then ``checks`` is ``copies`` itself when all
    # are); the agent's object itself, for one that is not (the SDK's message objects, dicts
    # holding them), as long as its watch holds; ``_UNEQUAL`` for one never taken as it was.
    checks: list[Any]
    # The watched messages (those whose check is the agent's object), by position: every dict and
    # list inside one (of a model: its ``__dict__``, extra fields) and a shallow copy of each. All
    # equal to their copies, the object is as it was; changed in place, a container differs.
    watch_at: list[int]
    watched: list[list[Any]]
    frozen: list[list[Any]]
    # The position of the first system (or developer) role after the first message, or the length
    # when there is none (``0``: not known).
    later: int


_recent = _Conversation([], [], [], [], [], [], 0)


def jsonable_list(values: Any) -> list[Any]:
    """``[jsonable(v) for v in values]``: see :func:`plain_messages`."""
    return plain_messages(values)[0]


def plain_messages(values: list[Any]) -> tuple[OwnMessages, list[Any], int]:
    """``[jsonable(v) for v in values]``, each message's ``role`` (``None`` for one that is not
    a dict) and where the first system (or developer) role after the first message is (the length
    when none is: see :func:`later_system`). The messages are handed on as copies of ours
    (:class:`OwnMessages`: nothing of the agent's inside, and nobody changes them, so the recorder
    keeps them without copies of its own and knows them again by identity).

    A resent conversation costs a comparison in C per message, whatever it holds: each position is
    compared with the last conversation's (see ``_recent``), and a message found as it was there
    is handed on as the same copy, with its role. Only the others are read: a dict of ``str`` keys
    and scalar values (most messages) is copied in C, any other is made plain JSON
    (:func:`jsonable`) and copied."""
    global _recent
    count = len(values)
    try:
        recent, todo = _unchanged(values, _recent)
    except Exception:  # an odd object's comparison: nothing is taken as it was
        recent = _recent
        todo = list(range(min(count, len(recent.checks))))
    copies, known_roles, checks, watch_at, watched, frozen, later = recent
    length = min(count, len(checks))
    fresh = todo[0] if todo else length  # the positions before it hold what they held (``later`` too)
    if not todo and length == count:
        roles = known_roles[:count]
        return OwnMessages(copies[:count]), roles, later_system(roles, later, fresh)
    todo += range(length, count)
    out = OwnMessages(copies)
    del out[length:]
    out += [None] * (count - length)
    roles = known_roles[:length]
    roles += [None] * (count - length)
    special = checks is not copies  # (some check is not the copy: a list of its own)
    checks = checks[:length] + [_UNEQUAL] * (count - length) if special else out
    unordered = False
    if watch_at:
        watch_at, watched, frozen, unordered = _kept_watches(watch_at, watched, frozen, todo, length)
    else:
        watch_at, watched, frozen = [], [], []
    rest = [values[index] for index in todo]
    for index, message, flat in zip(todo, rest, _flat(rest), strict=True):
        if flat:  # copied in C, compared in C
            out[index] = value = dict(message)
            if special:
                checks[index] = value
        else:
            value, check, watch = _read(message)
            out[index] = value
            if check is not value:
                if not special:
                    checks, special = list(out), True
                if watch is not None:
                    watch_at.append(index)
                    watched.append(watch[0])
                    frozen.append(watch[1])
            if special:
                checks[index] = check
        roles[index] = value.get("role") if type(value) is dict else None
    later = later_system(roles, later, fresh)
    if count <= _REMEMBER_AT_MOST:
        if unordered:
            watches = sorted(zip(watch_at, watched, frozen, strict=True), key=operator.itemgetter(0))
            watch_at, watched, frozen = (list(column) for column in zip(*watches, strict=True))
        _recent = _Conversation(out, roles, checks, watch_at, watched, frozen, later)
    return out, roles, later


def later_system(roles: list[Any], known: int = 0, fresh: int = 0) -> int:
    """The position of the first system (or developer) role after the first, or ``len(roles)``.
    ``known``: that position in the last conversation (``0``: not known), whose roles before
    ``fresh`` are these: only the positions from there are looked at (a resent conversation, none)."""
    start = 1
    if known:
        if known < fresh:
            return known
        if fresh:
            start = fresh
    end = len(roles)
    try:
        if end - start < 8:  # a few new ones (the usual): looked at one by one
            while start < end:
                if roles[start] in SYSTEM_ROLES:
                    return start
                start += 1
            return end
        if SYSTEM_ROLES.isdisjoint(roles[start:]):  # none (the usual), found in C
            return end
        return next(i for i in range(start, end) if roles[i] in SYSTEM_ROLES)
    except TypeError:  # an unhashable role
        return next((i for i in range(start, end) if is_system_role(roles[i])), end)


def _unchanged(values: list[Any], recent: _Conversation) -> tuple[_Conversation, list[int]]:
    """The conversation to compare ``values`` with (``recent``, or ``recent`` without the messages
    a sliding window dropped, so the rest line up again: see ``alignment.align``) and the
    positions of it not found as they were, in order: changed, or a watched object changed in
    place."""
    found = align(values, recent.checks)
    if found.dropped:
        recent = _without(recent, found.at, found.dropped)
    todo = found.changed
    if recent.watched != recent.frozen:  # a watched object changed in place (or one no longer sent)
        length = min(len(values), len(recent.checks))
        watches = zip(recent.watch_at, recent.watched, recent.frozen, strict=True)
        changed = [at for at, now, then in watches if now != then]
        todo = sorted(set(todo).union(at for at in changed if at < length))
    return recent, todo


def _without(recent: _Conversation, at: int, dropped: int) -> _Conversation:
    """``recent`` without the ``dropped`` messages at position ``at`` (their watches too; the
    watches after them moved up)."""
    copies, roles, checks, watch_at, watched, frozen, _later = recent
    stop = at + dropped
    kept = copies[:at] + copies[stop:]
    low, high = bisect.bisect_left(watch_at, at), bisect.bisect_left(watch_at, stop)
    return _Conversation(
        copies=kept,
        roles=roles[:at] + roles[stop:],
        checks=kept if checks is copies else checks[:at] + checks[stop:],
        watch_at=watch_at[:low] + [index - dropped for index in watch_at[high:]],
        watched=watched[:low] + watched[high:],
        frozen=frozen[:low] + frozen[high:],
        later=0,
    )


def _kept_watches(
    at: list[int], watched: list[Any], frozen: list[Any], todo: list[int], length: int
) -> tuple[list[int], list[Any], list[Any], bool]:
    """The last conversation's watches at the positions kept (before ``length``, not in ``todo``,
    which is in order), and whether any is after a position of ``todo`` (then the watches of the
    positions read, appended, are out of order)."""
    first = bisect.bisect_left(at, todo[0])
    kept_at, kept, kept_frozen = at[:first], watched[:first], frozen[:first]
    unordered = False
    if first < len(at):
        again = set(todo)
        for index in range(first, len(at)):
            if at[index] < length and at[index] not in again:
                kept_at.append(at[index])
                kept.append(watched[index])
                kept_frozen.append(frozen[index])
                unordered = True
    return kept_at, kept, kept_frozen, unordered


def _flat(messages: list[Any]) -> list[bool]:
    """Whether each message is a dict of ``str`` keys and scalar values (its copy in C is a copy of
    ours)."""
    return [
        isinstance(m, dict)
        and all(type(name) is str for name in dict.keys(m))
        and _SCALAR_TYPES.issuperset(map(type, dict.values(m)))
        for m in messages
    ]


def _read(message: Any) -> tuple[Any, Any, tuple[list[Any], list[Any]] | None]:
    """A message that is not a flat dict: its plain copy, what to compare it with next, and its
    watch (the containers in it and their copies; ``None`` when it is compared by equality alone)."""
    value = _own_copy(jsonable(message))
    if value is _UNEQUAL:  # not copied: handed on as made, never taken as unchanged
        return jsonable(message), _UNEQUAL, None
    if type(message) is dict and _plain(message):  # plain JSON: compared with our copy, in C
        return value, value, None
    watch = _containers(message)
    if watch is None:  # something not known to stay as it is: read again next time
        return value, _UNEQUAL, None
    return value, message, (watch, [dict(c) if type(c) is dict else list(c) for c in watch])


def _own_copy(value: Any) -> Any:
    """A deep copy of a plain value (one orjson round trip, in C); ``_UNEQUAL`` when it has none."""
    try:
        return orjson.loads(_dumps(value))
    except (TypeError, orjson.JSONEncodeError):  # (an int past 64 bits, a key that is no str)
        try:
            return copy.deepcopy(value)
        except Exception:
            return _UNEQUAL


def _containers(value: Any) -> list[Any] | None:
    """Every dict and list inside ``value`` (of a pydantic model: its ``__dict__`` and extra
    fields), or ``None`` when something in it is neither those nor a scalar, or there are too many."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _SCALAR_TYPES:
            continue
        if kind is dict:
            found.append(item)
            stack.extend(item.values())
        elif kind is list:
            found.append(item)
            stack.extend(item)
        elif kind is tuple:
            stack.extend(item)
        elif isinstance(item, _SCALARS):  # (an enum of str: immutable)
            continue
        else:
            fields = getattr(item, "__dict__", None)
            if type(fields) is not dict or not callable(getattr(item, "model_dump", None)):
                return None
            found.append(fields)
            stack.extend(fields.values())
            extra = getattr(item, "__pydantic_extra__", None)
            if type(extra) is dict:
                found.append(extra)
                stack.extend(extra.values())
        if len(found) > _WATCH_AT_MOST:
            return None
    return found
