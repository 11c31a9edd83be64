"""Every version of the session format reads back: files written by 1.0 and 1.1 recorders (kept
under fixtures/) read as they were written, a recording now (1.3) reads back to the same spans,
snapshots and conversation as the same run recorded in 1.1, and the 1.2 recording of that run
(fixtures/v1_2, by the 1.2 recorder) reads back as the 1.3 one."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
ROOT = HERE.parents[1]
GOLDEN_SESSION = "session-20231114-221320-0a0b0c0d"
OLD_FILES = sorted(p for v in ("v1_0", "v1_1") for p in (FIXTURES / v).glob("*.jsonl"))  # read as written


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_the_fixtures_hold_each_older_version():
    versions = {_lines(p)[0]["metadata"]["format_version"] for p in OLD_FILES}
    assert versions == {"1.0", "1.1"}
    v12 = {_lines(p)[0]["metadata"]["format_version"] for p in (FIXTURES / "v1_2").glob("*.jsonl")}
    assert v12 == {"1.2"}
    assert fmt.FORMAT_VERSION == "1.3"


@pytest.mark.parametrize("path", OLD_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_older_file_reads_exactly_as_it_was_written(path: Path):
    assert list(fmt.iter_entries(path)) == _lines(path)
    session = load_session(path)
    assert session.complete and not session.issues
    assert session.spans and all(s.finished for s in session.spans)
    for snapshot in session.snapshots:
        assert snapshot["agent_messages"] and not any("missing" in m for m in snapshot["agent_messages"])
    assert session.snapshots == fmt.build_snapshots(lambda: fmt.iter_entries(path))


@pytest.mark.parametrize("version", ["v1_0", "v1_1"])
def test_an_older_zip_reads_as_its_jsonl(version: str):
    from_zip, from_jsonl = (
        load_session(FIXTURES / version / "agent.zip"),
        load_session(FIXTURES / version / "agent.jsonl"),
    )
    assert [e.data for e in from_zip.events] == [e.data for e in from_jsonl.events]
    # (a 1.0 ZIP counted events_since_last from the session's start; the ZIP's own list is read)
    assert [{**s, "events_since_last": 0} for s in from_zip.snapshots] == [
        {**s, "events_since_last": 0} for s in from_jsonl.snapshots
    ]


# --- 1.3 and 1.2 against 1.1: the same information -------------------------------------------------


def _record_golden(directory: Path, tier: str) -> Path:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(directory))
    env.pop("AGENT_TRACE_SESSION_ID", None)
    subprocess.run(
        [sys.executable, "-m", "tests.golden.record_golden", str(directory), tier],
        check=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    suffix = ".checkpoint" if tier == "checkpoint" else ""
    return directory / f"{GOLDEN_SESSION}{suffix}.jsonl"


# Spans started carrying agent_trace.session.id after the 1.1 fixture was recorded.
_NEWER_ATTRIBUTES = ("agent_trace.session.id",)


def _what_it_says(path: Path) -> dict[str, Any]:
    """A session as readers see it, without what differs by construction between two recordings
    of one run (entry ids, counts of entries between snapshots)."""
    session = load_session(path)
    spans = []
    for span in session.spans:
        record = dict(vars(span))
        del record["entry_id"], record["parent_entry_id"]
        record["attributes"] = {k: v for k, v in span.attributes.items() if k not in _NEWER_ATTRIBUTES}
        record["content"] = {
            key: [session._message_view(i) for i in value] if key.endswith("_message_ids") else value
            for key, value in span.content.items()
        }
        record["events"] = [{k: v for k, v in e.items() if k not in ("id", "parent_id")} for e in span.events]
        spans.append(record)
    snapshots = [{k: v for k, v in s.items() if k != "events_since_last"} for s in session.snapshots]
    messages = [{k: v for k, v in e.data.items() if k not in ("id", "parent_id")} for e in session.events]
    return {
        "spans": spans,
        "snapshots": snapshots,
        "conversation": session.conversation(),
        "messages": [m for m in messages if m["type"] == fmt.MESSAGE],
    }


@pytest.mark.parametrize("tier", ["trace", "checkpoint"])
def test_a_recording_now_says_what_its_11_and_12_recordings_say(tmp_path: Path, tier: str):
    suffix = ".checkpoint" if tier == "checkpoint" else ""
    new = _record_golden(tmp_path, tier)
    old = FIXTURES / "v1_1" / f"golden-conversation{suffix}.jsonl"
    v12 = FIXTURES / "v1_2" / f"golden-conversation{suffix}.jsonl"
    assert _lines(new)[0]["metadata"]["format_version"] == fmt.FORMAT_VERSION == "1.3"
    assert b'"keep":' in v12.read_bytes()  # its message ids by reference (1.2's form)
    said_before, said_12, said_now = _what_it_says(old), _what_it_says(v12), _what_it_says(new)
    assert len(said_now["snapshots"]) == 7 and len(said_now["spans"]) == 15
    for key in said_before:
        assert said_now[key] == said_before[key], key
        assert said_12[key] == said_before[key], key
    assert new.stat().st_size < 0.85 * old.stat().st_size
    # A growing conversation is written as 1.2 wrote it: the same bytes but for the version.
    as_13 = v12.read_bytes().replace(b'"format_version":"1.2"', b'"format_version":"1.3"', 1)
    assert new.read_bytes() == as_13


def test_a_12_zip_reads_as_its_jsonl():
    from_zip = load_session(FIXTURES / "v1_2" / "golden-conversation.zip")
    from_jsonl = load_session(FIXTURES / "v1_2" / "golden-conversation.jsonl")
    assert [e.data for e in from_zip.events] == [e.data for e in from_jsonl.events]
    assert from_zip.snapshots == from_jsonl.snapshots and len(from_zip.snapshots) == 7


def test_a_zip_of_a_parent_and_child_files_upgrades_each_file_on_its_own(tmp_path: Path):
    """``events.jsonl`` is the parent's file then its children's: each root starts the reader's
    state again (a child's snapshots and spans never refer to the parent's)."""
    new = _record_golden(tmp_path / "rec", "trace")
    lines = new.read_bytes().splitlines(keepends=True)
    child_root = orjson.loads(lines[0])
    child_root["type"] = fmt.SESSION_JOIN
    joined = tmp_path / "joined.jsonl"
    joined.write_bytes(b"".join(lines) + orjson.dumps(child_root) + b"\n" + b"".join(lines[1:]))
    entries = list(fmt.iter_entries(joined))
    alone = list(fmt.iter_entries(new))
    assert entries[len(alone) + 1 :] == alone[1:]


# --- growth ----------------------------------------------------------------------------------------


def test_snapshots_grow_by_what_is_new_not_by_the_conversation(recording: oat.Session):
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse. " * 40}]
    for turn in range(120):
        messages.append({"role": "user", "content": f"question {turn}"})
        messages.append({"role": "assistant", "content": f"answer {turn}"})
        oat.snapshot(f"turn {turn}", messages=messages, system_prompt=messages[0]["content"])
    path = recording.files[0]
    recording.stop()
    snapshot_lines = [line for line in path.read_bytes().splitlines() if b'"type":"snapshot"' in line]
    assert len(snapshot_lines) == 120
    assert max(len(line) for line in snapshot_lines[20:]) < 400  # 241 message ids by the end
    session = load_session(path)
    assert [s["agent_messages_count"] for s in session.snapshots] == [3 + 2 * t for t in range(120)]
    last = session.snapshots[-1]
    assert [m["content_chars"] for m in last["agent_messages"]] == [
        fmt.content_chars(m["content"]) for m in messages
    ]
    assert all(
        s["system_prompt_hash"] == fmt.content_sha256(messages[0]["content"]) for s in session.snapshots
    )


def test_a_conversation_that_changes_course_is_written_whole(recording: oat.Session):
    """A list of message ids that holds no long enough run of the previous snapshot's is written as
    it is; one that is the end of the previous snapshot's is a run of it (1.3)."""
    first = [{"role": "user", "content": f"m{i}"} for i in range(12)]
    second = [{"role": "user", "content": f"other {i}"} for i in range(12)]
    third = [{"role": "user", "content": f"third {i}"} for i in range(12)]
    conversations = (first, first[:10] + second, second, third)
    for name, messages in zip("abcd", conversations, strict=True):
        oat.snapshot(name, messages=messages)
    path = recording.files[0]
    recording.stop()
    raw = [e for e in _lines(path) if e["type"] == fmt.SNAPSHOT]
    assert isinstance(raw[0]["message_ids"], list)
    assert raw[1]["message_ids"]["keep"] == 10 and len(raw[1]["message_ids"]["add"]) == 12
    assert raw[2]["message_ids"]["keep"] == [[10, 22]] and raw[2]["message_ids"]["add"] == []
    assert isinstance(raw[3]["message_ids"], list)  # nothing in common with the one before
    snapshots = load_session(path).snapshots
    assert [[m["content_sha256"] for m in s["agent_messages"]] for s in snapshots] == [
        [fmt.content_sha256(m["content"]) for m in ms] for ms in conversations
    ]


def test_a_reference_to_a_snapshot_that_is_not_the_latest_is_an_error_naming_the_line(tmp_path: Path):
    new = _record_golden(tmp_path / "rec", "trace")
    lines = new.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if b'"base":' in line and b'"type":"snapshot"' in line)
    lines[number] = lines[number].replace(b'"base":"', b'"base":"x')
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines))
    with pytest.raises(fmt.SessionFormatError, match=rf"broken.jsonl:{number + 1}: .*message_ids"):
        load_session(broken)


def test_a_model_calls_system_prompt_and_tools_are_written_once_while_they_stay(
    recording: oat.Session, provider
):
    from otel_agent_trace._internal import sink

    tracer = provider.get_tracer("test")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    systems = ["You are terse.", "You are terse.", "You are verbose."]
    for system in systems:
        with tracer.start_as_current_span("chat m") as span:
            sink.active().attach_content(
                span,
                {
                    "input_messages": [{"role": "user", "content": "hi"}],
                    "output_messages": [{"role": "assistant", "content": "hello"}],
                    "system_instructions": system,
                    "tool_definitions": tools,
                },
            )
    path = recording.files[0]
    recording.stop()
    ends = [e for e in _lines(path) if e["type"] == fmt.SPAN_END]
    assert "system_instructions" in ends[0]["content"] and "same" not in ends[0]["content"]
    assert ends[1]["content"]["same"] == ["system_instructions", "tool_definitions"]
    assert ends[2]["content"]["same"] == ["tool_definitions"]
    spans = load_session(path).spans
    assert [s.content["tool_definitions"] for s in spans] == [tools] * 3
    assert [s.content["system_instructions"]["sha256"] for s in spans] == [
        fmt.content_sha256(s) for s in systems
    ]


def test_a_12_zips_snapshots_json_of_format_2_still_resolves():
    """A ZIP of format 1.2 has ``snapshots.json`` format 2 (a leading run kept as ``"keep": n``):
    ``resolve_snapshots`` reads it as it did, to the snapshots the loader builds."""
    path = FIXTURES / "v1_2" / "golden-conversation.zip"
    with zipfile.ZipFile(path) as zf:
        assert orjson.loads(zf.read(fmt.ZIP_METADATA))["snapshots_format"] == 2
        snapshots = orjson.loads(zf.read(fmt.ZIP_SNAPSHOTS))
    loaded = load_session(path)
    messages = {e.id: e.data for e in loaded.events if e.data.get("type") == "message"}
    assert fmt.resolve_snapshots(snapshots, messages) == loaded.snapshots
