"""Serialization of entries (orjson): never fails on odd values, and canonical JSON for hashing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, cast

import orjson

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def json_default(value: Any) -> Any:
    """Make any value JSON: bytes are summarised, unknown objects become their repr (never fail)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(cast("bytes", value))
        return {"$bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in cast("set[Any]", value))
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:  # a broken pydantic model must not stop the write
            pass
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    if hasattr(value, "items"):
        try:
            return {str(k): v for k, v in value.items()}
        except Exception:
            pass
    if isinstance(value, (tuple, list)) or hasattr(value, "__iter__") and not isinstance(value, str):
        try:
            return list(cast("list[Any]", value))
        except Exception:
            pass
    shown = cast(object, value)  # (whatever it is: not narrowed by the tests above)
    try:
        text = repr(shown)
    except Exception:  # a broken __repr__ must not lose the entry
        text = f"<{type(shown).__name__} object>"
    return text if len(text) <= 2000 else text[:2000] + "…"


def dumps(entry: dict[str, Any]) -> bytes:
    """Serialize one entry as a line (with the trailing newline). Never raises on odd values."""
    try:
        return orjson.dumps(entry, default=json_default, option=_OPTS | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        # Integers beyond 64 bits, recursive structures, …: fall back to a stringified payload.
        return orjson.dumps(_stringify(entry), option=_OPTS | orjson.OPT_APPEND_NEWLINE)


def dumps_canonical(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=json_default, option=_OPTS | orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(_stringify(value), option=orjson.OPT_SORT_KEYS)


def _stringify(value: Any, depth: int = 0) -> Any:
    if depth > 40:
        return "<too deep>"
    if isinstance(value, dict):
        return {_utf8(str(k)): _stringify(v, depth + 1) for k, v in cast("dict[Any, Any]", value).items()}
    if isinstance(value, (list, tuple)):
        return [_stringify(v, depth + 1) for v in cast("list[Any]", value)]
    if isinstance(value, str):
        return _utf8(value)
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    return _utf8(str(json_default(value))) if not isinstance(value, int) else str(value)


def _utf8(text: str) -> str:
    """Text JSON can hold: lone surrogates (undecodable file names, …) become ``\\udcxx`` escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def loads(line: bytes | str) -> Any:
    return orjson.loads(line)
