"""Type checks shared by the format modules: a wrong type is a :class:`BadEntry` naming the field."""

from __future__ import annotations

import math
from typing import Any


class BadEntry(ValueError):
    """An entry that parses as JSON but not as a session entry; the loader adds file and line."""


def text(raw: dict[str, Any], key: str, *, required: bool = False, default: str | None = None) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise BadEntry(f"no {key!r}")
        return default
    if not isinstance(value, str):
        raise BadEntry(f"{key!r} is {type(value).__name__}, not a string")
    return value


def integer(raw: dict[str, Any], key: str, *, required: bool = False) -> int | None:
    """An integer field; a finite float is taken (rounded down), anything else refused."""
    value = raw.get(key)
    if value is None:
        if required:
            raise BadEntry(f"no {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadEntry(f"{key!r} is {value}, not a finite number")
        return int(value)
    return value


def number(raw: dict[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a finite number")
    return float(value)


def mapping(raw: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, dict):
        raise BadEntry(f"{key!r} is {type(value).__name__}, not an object")
    return value


def strings(raw: dict[str, Any], key: str) -> list[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadEntry(f"{key!r} is {_shown(value)}, not a list of ids")
    return value


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40])
    return type(value).__name__


def flatten(entry: dict[str, Any], data: dict[str, Any] | None) -> dict[str, Any]:
    """A foreign event's own fields beside ours; one whose name is taken stays under ``data``."""
    if not data:
        return entry
    clashes = {k: v for k, v in data.items() if k in entry}
    for key, value in data.items():
        if key not in entry:
            entry[key] = value
    if clashes:
        entry["data"] = clashes
    return entry
