"""Session ids, entry ids, trace/span ids as hex, and content hashes."""

from __future__ import annotations

import hashlib
import itertools
import os
import secrets
import time
from typing import Any

from .codec import dumps_canonical

_id_base = secrets.randbits(32)
_id_counter = itertools.count()


def _reseed_ids() -> None:
    """A forked child draws its own base (it would repeat its parent's next ids)."""
    global _id_base, _id_counter
    _id_base = secrets.randbits(32)
    _id_counter = itertools.count()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_ids)


def new_session_id(now: float | None = None) -> str:
    """``session-YYYYMMDD-HHMMSS-<8 hex>``: readable and sortable. The 8 hex digits are a random
    per-process base plus a counter, so ids never repeat within a process; across processes a
    clash needs the same second and the same 32 bits, and the writer (``O_EXCL``) then draws again."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    return f"session-{stamp}-{(_id_base + next(_id_counter) * 0x9E3779B1) & 0xFFFFFFFF:08x}"


def entry_prefix(session_id: str, salt: str = "") -> str:
    """The 8-hex prefix of entry ids for one file of a session (``salt`` separates child files)."""
    tail = session_id.rsplit("-", 1)[-1]
    if not salt and len(tail) == 8 and all(c in "0123456789abcdef" for c in tail):
        return tail
    return hashlib.sha256(f"{session_id}/{salt}".encode()).hexdigest()[:8]


def entry_id(prefix: str, seq: int) -> str:
    return f"{prefix}-{seq:04d}"


def trace_id_hex(trace_id: int) -> str:
    return f"{trace_id:032x}"


def span_id_hex(span_id: int) -> str:
    return f"{span_id:016x}"


def content_sha256(value: Any) -> str:
    """SHA-256 of a message or value, over its canonical JSON (text is hashed as UTF-8)."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    else:
        data = dumps_canonical(value)
    return hashlib.sha256(data).hexdigest()


def content_chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return len(dumps_canonical(value).decode("utf-8", "replace"))
