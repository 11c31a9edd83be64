"""Fuzzing: whatever the bytes, loading a session raises nothing but SessionFormatError (or
FileNotFoundError) — through load_session, the streaming reader and every property."""

from __future__ import annotations

import io
import json
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import iter_entries, load_session

from . import hostile
from .samples import devduck_events, dm_entries, write_devduck_zip

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
KEYS = [
    "id", "parent_id", "type", "layer", "ts", "span_id", "trace_id", "parent_span_id", "name", "attributes",
    "status", "content", "duration_ns", "metadata", "session_id", "tier", "message_ids", "snapshot_id",
    "role", "timestamp_ns", "event_type", "data", "event", "payload", "timestamp", "run_id",
]  # fmt: skip
TYPES = [*fmt.ENTRY_TYPES, "file.open", "tool.call", "tool.result", "session.stop", "run_start", "run_end"]
entries = st.dictionaries(
    st.sampled_from(KEYS), json_values | st.sampled_from(TYPES) | st.integers(0, 2**63), max_size=10
)


def exercise(path: Path) -> None:
    """Read ``path`` every way a user can; only our own error types may come out."""
    for kwargs in ({}, {"lenient": True}, {"strict": True}):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                session = load_session(path, **kwargs)
            repr(session)
            _ = (session.metadata, session.complete, session.duration, session.spans, session.snapshots)
            session.conversation()
            session.conversation(session.events[-1].id)
            json.dumps(session.to_dict(), default=str)
            session.get_events_by_type("file.open")
            session.ancestors(session.events[-1].id)
        except fmt.SessionFormatError:
            pass
    for issues in (None, []):
        try:
            sum(1 for _ in iter_entries(path, issues))
        except fmt.SessionFormatError:
            pass


def _write(data: bytes, name: str = "fuzz.jsonl") -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as directory:
        path = Path(directory) / name
        path.write_bytes(data)
        exercise(path)


@FUZZ
@given(st.lists(entries, min_size=1, max_size=6), st.booleans())
def test_fuzzed_entries(lines: list[dict[str, Any]], root_first: bool):
    if root_first:
        lines = [hostile.ROOT, *lines]
    _write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


@FUZZ
@given(st.binary(max_size=400))
def test_fuzzed_bytes(data: bytes):
    _write(data)
    _write(json.dumps(hostile.ROOT).encode() + b"\n" + data)


def _valid_zip() -> bytes:
    buffer = io.BytesIO()
    root = json.dumps(hostile.ROOT).encode() + b"\n"
    span = json.dumps(hostile.entry(1, "span.end", duration_ns=5, status={"code": "OK"})).encode() + b"\n"
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("events.jsonl", root + span)
        zf.writestr("snapshots.json", "[]")
        zf.writestr("metadata.json", json.dumps({"session_id": "x", "format_version": "1.1"}))
    return buffer.getvalue()


VALID_ZIP = _valid_zip()


@FUZZ
@given(
    st.lists(st.tuples(st.integers(0, len(VALID_ZIP) - 1), st.integers(0, 255)), max_size=8),
    st.integers(0, 40),
)
def test_fuzzed_zips(flips: list[tuple[int, int]], cut: int):
    data = bytearray(VALID_ZIP)
    for at, value in flips:
        data[at] = value
    _write(bytes(data[: len(data) - cut]), "fuzz.zip")


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, 12),
            st.sampled_from(["timestamp_ns", "layer", "event_type", "data", "trace_id"]),
            json_values,
        ),
        max_size=5,
    )
)
def test_fuzzed_devduck_zips(changes: list[tuple[int, str, Any]]):
    events = devduck_events()
    for index, key, value in changes:
        events[index][key] = value
    with tempfile.TemporaryDirectory(prefix="fuzz-") as directory:
        exercise(write_devduck_zip(Path(directory) / "devduck.zip", events))


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, 7),
            st.sampled_from(["id", "parent_id", "timestamp", "run_id", "event", "payload"]),
            json_values,
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_fuzzed_dm_files(changes: list[tuple[int, str, Any]], legacy: bool):
    lines = dm_entries(legacy)
    for index, key, value in changes:
        lines[index][key] = value
    _write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
