"""The session file format, owned here and nowhere else: entry types and fields (``schema``), ids
and content hashes (``ids``), serialization (``codec``), the streaming reader of JSONL, ZIP and
child-process files (``reader``), the snapshot and message views (``views``) and message
normalisation from each SDK's shape (``messages``).

The recorder (:mod:`otel_agent_trace.recording`), the ZIP writer and every reader
(:mod:`otel_agent_trace.offline`) go through it. It imports no OpenTelemetry and no capture code.
``docs/session-format.md`` documents the format.

Names load on first use (the recorder is imported by every Python child of an agent run under
``opentelemetry-instrument``; the reader, ZIP support and hashing are needed only when used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_agent_trace._lazy import lazy_names

if TYPE_CHECKING:
    from .codec import (
        dumps,
        dumps_canonical,
        json_default,
        loads,
    )
    from .ids import (
        content_chars,
        content_sha256,
        entry_id,
        entry_prefix,
        new_session_id,
        span_id_hex,
        trace_id_hex,
    )
    from .reader import (
        ReadIssue,
        child_files,
        is_session_entry,
        iter_entries,
        iter_files,
        iter_lines,
        open_events,
    )
    from .schema import (
        CHECKPOINT,
        CHECKPOINT_SUFFIX,
        DEVDUCK_SNAPSHOT_KEYS,
        ENTRY_TYPES,
        FORK,
        FORMAT_NAME,
        FORMAT_VERSION,
        JSONL_SUFFIX,
        LAYER_AGENT,
        LAYER_SYS,
        LAYER_TOOL,
        LAYERS,
        MESSAGE,
        SESSION_END,
        SESSION_JOIN,
        SESSION_START,
        SNAPSHOT,
        SPAN_END,
        SPAN_EVENT,
        SPAN_START,
        STATUS_ERROR,
        STATUS_OK,
        STATUS_UNFINISHED,
        STATUS_UNSET,
        ZIP_EVENTS,
        ZIP_MEMBERS,
        ZIP_METADATA,
        ZIP_RESUME,
        ZIP_SNAPSHOTS,
        ZIP_SUFFIX,
        SessionFormatError,
        session_file_name,
    )
    from .views import (
        build_snapshots,
        message_view,
        model_info_view,
        snapshot_view,
    )

_LAZY: dict[str, str] = {
    "CHECKPOINT": "schema",
    "CHECKPOINT_SUFFIX": "schema",
    "DEVDUCK_SNAPSHOT_KEYS": "schema",
    "ENTRY_TYPES": "schema",
    "FORK": "schema",
    "FORMAT_NAME": "schema",
    "FORMAT_VERSION": "schema",
    "JSONL_SUFFIX": "schema",
    "LAYERS": "schema",
    "LAYER_AGENT": "schema",
    "LAYER_SYS": "schema",
    "LAYER_TOOL": "schema",
    "MESSAGE": "schema",
    "ReadIssue": "reader",
    "SESSION_END": "schema",
    "SESSION_JOIN": "schema",
    "SESSION_START": "schema",
    "SNAPSHOT": "schema",
    "SPAN_END": "schema",
    "SPAN_EVENT": "schema",
    "SPAN_START": "schema",
    "STATUS_ERROR": "schema",
    "STATUS_OK": "schema",
    "STATUS_UNFINISHED": "schema",
    "STATUS_UNSET": "schema",
    "SessionFormatError": "schema",
    "ZIP_EVENTS": "schema",
    "ZIP_MEMBERS": "schema",
    "ZIP_METADATA": "schema",
    "ZIP_RESUME": "schema",
    "ZIP_SNAPSHOTS": "schema",
    "ZIP_SUFFIX": "schema",
    "build_snapshots": "views",
    "child_files": "reader",
    "content_chars": "ids",
    "content_sha256": "ids",
    "dumps": "codec",
    "dumps_canonical": "codec",
    "entry_id": "ids",
    "entry_prefix": "ids",
    "is_session_entry": "reader",
    "iter_entries": "reader",
    "iter_files": "reader",
    "iter_lines": "reader",
    "json_default": "codec",
    "loads": "codec",
    "message_view": "views",
    "model_info_view": "views",
    "new_session_id": "ids",
    "open_events": "reader",
    "session_file_name": "schema",
    "snapshot_view": "views",
    "span_id_hex": "ids",
    "trace_id_hex": "ids",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "CHECKPOINT",
    "CHECKPOINT_SUFFIX",
    "DEVDUCK_SNAPSHOT_KEYS",
    "ENTRY_TYPES",
    "FORK",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "JSONL_SUFFIX",
    "LAYERS",
    "LAYER_AGENT",
    "LAYER_SYS",
    "LAYER_TOOL",
    "MESSAGE",
    "ReadIssue",
    "SESSION_END",
    "SESSION_JOIN",
    "SESSION_START",
    "SNAPSHOT",
    "SPAN_END",
    "SPAN_EVENT",
    "SPAN_START",
    "STATUS_ERROR",
    "STATUS_OK",
    "STATUS_UNFINISHED",
    "STATUS_UNSET",
    "SessionFormatError",
    "ZIP_EVENTS",
    "ZIP_MEMBERS",
    "ZIP_METADATA",
    "ZIP_RESUME",
    "ZIP_SNAPSHOTS",
    "ZIP_SUFFIX",
    "build_snapshots",
    "child_files",
    "content_chars",
    "content_sha256",
    "dumps",
    "dumps_canonical",
    "entry_id",
    "entry_prefix",
    "is_session_entry",
    "iter_entries",
    "iter_files",
    "iter_lines",
    "json_default",
    "loads",
    "message_view",
    "model_info_view",
    "new_session_id",
    "open_events",
    "session_file_name",
    "snapshot_view",
    "span_id_hex",
    "trace_id_hex",
]
