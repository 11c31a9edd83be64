"""Turning SDK objects (pydantic models, ``Omit`` sentinels, iterables) into plain JSON values."""

from __future__ import annotations

from typing import Any

from otel_agent_trace.session_format.messages import text_of  # noqa: F401 (re-exported)

_SCALARS = (str, int, float, bool, type(None))


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
        return {str(k): jsonable(v, depth + 1) for k, v in value.items() if is_given(v) or v is None}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(exclude_none=True, mode="json"), depth + 1)
        except TypeError:
            return jsonable(dump(), depth + 1)
    if isinstance(value, (bytes, bytearray)):
        return {"type": "bytes", "size": len(value)}
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        try:
            return [jsonable(v, depth + 1) for v in value]
        except TypeError:
            pass
    return repr(value)
