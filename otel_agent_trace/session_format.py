"""The session file format: entry schema, ids, serialization and version.

This module is the single owner of the format; the writer (``opentelemetry.exporter.agent_session``)
and every reader (``otel_agent_trace.offline``) go through it. ``docs/session-format.md`` documents it.

A session file is JSON Lines, one entry a line. Every entry has ``id`` (``<prefix>-<seq>``),
``parent_id`` (``""`` for the root), ``type``, ``layer`` and ``ts`` (ns since the epoch).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

FORMAT_VERSION = "1.1"
FORMAT_NAME = "otel-agent-trace/session"

# Layers, as in DevDuck's recorder.
LAYER_AGENT = "agent"
LAYER_TOOL = "tool"
LAYER_SYS = "sys"
LAYERS = (LAYER_AGENT, LAYER_TOOL, LAYER_SYS)

# Entry types.
SESSION_START = "session.start"
SESSION_JOIN = "session.join"  # a child process joining its parent's session
SESSION_END = "session.end"
SPAN_START = "span.start"
SPAN_END = "span.end"
SPAN_EVENT = "span.event"
MESSAGE = "message"
SNAPSHOT = "snapshot"
CHECKPOINT = "checkpoint"
FORK = "fork"
ENTRY_TYPES = (
    SESSION_START,
    SESSION_JOIN,
    SESSION_END,
    SPAN_START,
    SPAN_END,
    SPAN_EVENT,
    MESSAGE,
    SNAPSHOT,
    CHECKPOINT,
    FORK,
)

# Span status codes as written.
STATUS_UNSET = "UNSET"
STATUS_OK = "OK"
STATUS_ERROR = "ERROR"
STATUS_UNFINISHED = "UNFINISHED"  # set by readers for a span.start with no span.end

# File names.
JSONL_SUFFIX = ".jsonl"
CHECKPOINT_SUFFIX = ".checkpoint"
ZIP_SUFFIX = ".zip"
ZIP_EVENTS = "events.jsonl"
ZIP_SNAPSHOTS = "snapshots.json"
ZIP_METADATA = "metadata.json"
ZIP_RESUME = "resume.json"
ZIP_MEMBERS = (ZIP_EVENTS, ZIP_SNAPSHOTS, ZIP_METADATA, ZIP_RESUME)

# Keys of DevDuck's snapshots.json objects, in its order (the ZIP keeps exactly these).
DEVDUCK_SNAPSHOT_KEYS = (
    "timestamp",
    "snapshot_id",
    "agent_messages_count",
    "tools_loaded",
    "system_prompt_hash",
    "env_vars_redacted",
    "cwd",
    "events_since_last",
    "agent_messages",
    "system_prompt",
    "last_query",
    "last_result",
    "model_info",
    "description",
)


class SessionFormatError(ValueError):
    """A session file could not be read; the message names the file and line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


# --- ids -----------------------------------------------------------------------------------


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


# --- serialization -------------------------------------------------------------------------

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(value: Any) -> Any:
    """Make any value JSON: bytes are summarised, unknown objects become their repr (never fail)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return {"$bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
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
            return list(value)
        except Exception:
            pass
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not lose the entry
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 2000 else text[:2000] + "…"


def dumps(entry: dict[str, Any]) -> bytes:
    """Serialize one entry as a line (with the trailing newline). Never raises on odd values."""
    try:
        return orjson.dumps(entry, default=_default, option=_OPTS | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        # Integers beyond 64 bits, recursive structures, …: fall back to a stringified payload.
        return orjson.dumps(_stringify(entry), option=_OPTS | orjson.OPT_APPEND_NEWLINE)


def dumps_canonical(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_default, option=_OPTS | orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(_stringify(value), option=orjson.OPT_SORT_KEYS)


def _stringify(value: Any, depth: int = 0) -> Any:
    if depth > 40:
        return "<too deep>"
    if isinstance(value, dict):
        return {_utf8(str(k)): _stringify(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stringify(v, depth + 1) for v in value]
    if isinstance(value, str):
        return _utf8(value)
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    return _utf8(str(_default(value))) if not isinstance(value, int) else str(value)


def _utf8(text: str) -> str:
    """Text JSON can hold: lone surrogates (undecodable file names, …) become ``\\udcxx`` escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def loads(line: bytes | str) -> Any:
    return orjson.loads(line)


# --- reading -------------------------------------------------------------------------------


@dataclass
class ReadIssue:
    """Something a reader tolerated: a torn last line, a blank line."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def iter_lines(
    stream: IO[bytes], path: str, *, issues: list[ReadIssue] | None = None, strict: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, entry)`` from a JSONL stream, one line in memory at a time.

    A last line that does not parse (the process died mid-write) is tolerated and reported in
    ``issues``. A bad line elsewhere raises :class:`SessionFormatError` naming file and line,
    unless ``strict`` is false and ``issues`` is given, in which case it is skipped and reported.
    """
    pending: tuple[int, bytes] | None = None
    number = 0
    for number, raw in enumerate(stream, 1):
        if pending is not None:
            entry = _parse(pending[1], path, pending[0], issues, strict, last=False)
            if entry is not None:
                yield pending[0], entry
        pending = (number, raw)
    if pending is not None:
        entry = _parse(pending[1], path, pending[0], issues, strict, last=True)
        if entry is not None:
            yield pending[0], entry


def _parse(
    raw: bytes, path: str, number: int, issues: list[ReadIssue] | None, strict: bool, last: bool
) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        torn = last and not raw.endswith(b"\n")
        reason = "torn last line (the writer stopped mid-line); ignored" if torn else f"not JSON ({exc})"
        if torn or (issues is not None and not strict):
            if issues is not None:
                issues.append(ReadIssue(path, number, reason))
            return None
        raise SessionFormatError(path, number, reason) from None
    if not isinstance(entry, dict):
        reason = f"expected a JSON object, got {type(entry).__name__}"
        if issues is not None and not strict:
            issues.append(ReadIssue(path, number, reason))
            return None
        raise SessionFormatError(path, number, reason)
    return entry


def is_session_entry(entry: dict[str, Any]) -> bool:
    return "id" in entry and "type" in entry


def session_file_name(session_id: str, tier: str, child: str | None = None) -> str:
    """``<session>.jsonl`` for the trace tier, ``<session>.checkpoint.jsonl`` for the checkpoint
    tier; a child process writes ``<session>.<child>[.checkpoint].jsonl`` beside its parent."""
    middle = f".{child}" if child else ""
    tier_part = CHECKPOINT_SUFFIX if tier == "checkpoint" else ""
    return f"{session_id}{middle}{tier_part}{JSONL_SUFFIX}"
