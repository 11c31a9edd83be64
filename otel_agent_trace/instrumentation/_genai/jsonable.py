"""Turning SDK objects (pydantic models, ``Omit`` sentinels, iterables) into plain JSON values."""

from __future__ import annotations

import operator
from itertools import chain, compress, repeat
from typing import Any

import orjson

from otel_agent_trace._internal.own_messages import OwnMessages
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
        try:
            dumped = dump(exclude_none=True, mode="json")
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


_UNEQUAL = object()  # in place of a message that was not plain: equal to nothing
_REMEMBER_AT_MOST = 16_384  # messages of the last conversation kept as plain copies
# Plain copies of the last conversation's leading plain messages, and the roles of its messages
# (shared by every thread: only ever compared with, so a stale or another thread's list costs
# time, never correctness).
_recent: tuple[list[Any], list[Any]] = ([], [])


def jsonable_list(values: Any) -> list[Any]:
    """``[jsonable(v) for v in values]``: see :func:`plain_messages`."""
    return plain_messages(values)[0]


def plain_messages(values: list[Any]) -> tuple[OwnMessages, list[Any]]:
    """``[jsonable(v) for v in values]`` and each message's ``role`` (``None`` for one that is not
    a dict), with no Python call for a dict of ``str`` keys and scalar values (most of a
    conversation's messages).

    A plain message is handed on as a copy of ours (:class:`OwnMessages`: nobody changes it, so
    the recorder keeps it without a copy of its own). A resent conversation costs one comparison
    in C per message: the leading messages equal to the copies of the last conversation's are
    plain (a dict equal to a dict of ``str`` keys and scalar values has such keys and values), are
    handed on as those copies, and have their roles, whatever object they are and however they
    were changed in place since. Which of the others are plain is found in C too."""
    global _recent
    copies, known_roles = _recent
    length = min(len(values), len(copies))
    try:
        # The two common cases first, each one comparison in C per message: the last conversation
        # resent and more after it; the last conversation resent with its last message replaced.
        last = length - 1
        if length == 0:
            equal, prefix = True, 0
        elif values[last] == copies[last]:
            equal, prefix = values[:last] == copies[:last], length
        else:
            equal, prefix = values[:last] == copies[:last], last
        if not equal:
            same = list(map(operator.eq, values, copies))
            prefix = same.index(False) if False in same else len(same)
    except Exception:  # an odd object's comparison: no prefix
        prefix = 0
    if prefix == len(values):
        return OwnMessages(copies[:prefix]), known_roles[:prefix]
    rest = values[prefix:] if prefix else values
    try:  # (dict.values raises for a value that is not a dict, before anything is iterated)
        plain = list(map(_SCALAR_TYPES.issuperset, map(map, repeat(type), map(dict.values, rest))))
        names = set(chain.from_iterable(map(dict.keys, rest)))
        roles = list(map(dict.get, rest, repeat("role")))
    except TypeError:  # not all dicts (their roles are read once they are dumped, below)
        plain = [False] * len(rest)
        names = set()
        roles = None
    if not all(type(name) is str for name in names):
        plain = [False] * len(rest)
    fresh = [dict(m) if p else _UNEQUAL for m, p in zip(rest, plain, strict=True)]
    out = OwnMessages(copies[:prefix])
    out += fresh
    if False in plain:
        for index in compress(range(len(rest)), map(operator.not_, plain)):
            message = rest[index]
            value = jsonable(message)
            if value is message and type(value) is dict:  # the agent's own dict: a copy of ours
                value = dict(value)  # (the recorder keeps plain messages of an OwnMessages as they are)
            out[prefix + index] = value
    if roles is None:
        roles = [m.get("role") if isinstance(m, dict) else None for m in out[prefix:]]
    roles = known_roles[:prefix] + roles if prefix else roles
    if len(values) <= _REMEMBER_AT_MOST:
        _recent = (copies[:prefix] + fresh, roles)
    return out, roles
