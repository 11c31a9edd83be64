"""The DevDuck seed's API and tree navigation on a real recorded session."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import (
    EntryLookupError,
    LoadedSession,
    iter_events,
    load_session,
    replay,
    resume,
)


@oat.tool
def double(x: int) -> int:
    return 2 * x


@pytest.fixture
def recorded(recording) -> tuple[Path, Path]:
    """Agent → two tools, messages, two snapshots: the session's JSONL and ZIP."""
    messages = [{"role": "user", "content": "double 2"}]
    with oat.agent("api-test"):
        double(1)
        oat.record_message("user", "double 2")
        oat.snapshot("first", messages=messages)
        double(2)
        messages.append({"role": "assistant", "content": "4"})
        oat.record_message("assistant", "4")
        oat.snapshot("second", messages=messages)
    jsonl = recording.files[0]
    return jsonl, Path(recording.stop()[0])


def test_devduck_api(recorded):
    jsonl, zip_path = recorded
    s = load_session(zip_path)
    shown = f"{s.duration:.1f}s" if s.duration >= 1 else f"{s.duration:.3g}s"  # short: what was measured
    assert (
        repr(s) == f"LoadedSession(id={s.session_id}, events={len(s.events)}, snapshots=2, duration={shown})"
    )
    assert s.complete and s.format.NAME == "otel-agent-trace" and s.tier == "trace"
    assert [x["snapshot_id"] for x in s.snapshots] == [1, 2]
    assert s.get_snapshot(2)["description"] == "second"
    with pytest.raises(KeyError, match="no snapshot 3 .*snapshots: \\[1, 2\\]"):
        s.get_snapshot(3)
    until = s.get_events_until_snapshot(2)
    assert until[-1].timestamp_ns <= s.get_events_by_type(fmt.SNAPSHOT)[1].timestamp_ns
    assert fmt.SNAPSHOT in {e.type for e in until} and len(until) < len(s.events)
    assert {e.type for e in s.get_events_by_layer("tool")} >= {fmt.SPAN_END}
    tools = [sp for sp in s.spans if sp.name == "execute_tool double"]
    assert len(tools) == 2 and all(sp.duration_ns is not None and sp.duration_ns >= 0 for sp in tools)
    d = s.to_dict()
    assert json.loads(json.dumps(d))["session_id"] == s.session_id
    assert len(d["events"]) == len(s.events) and d["snapshots"] == s.snapshots and d["complete"]


def test_events_in_a_time_range(recorded):
    s = load_session(recorded[0])
    first, last = s.events[0].timestamp_ns, s.events[-1].timestamp_ns
    middle = s.events[len(s.events) // 2].timestamp_ns
    assert s.get_events_in_range() == s.events
    assert s.get_events_in_range(first, last) == s.events
    assert all(e.timestamp_ns >= middle for e in s.get_events_in_range(middle))
    assert all(e.timestamp_ns <= middle for e in s.get_events_in_range(end=middle))
    seconds = s.get_events_in_range(first / 1e9 - 1, last / 1e9 + 1)
    assert seconds == s.events
    moment = datetime.fromtimestamp(last / 1e9 + 1, tz=timezone.utc)
    assert s.get_events_in_range(end=moment) == s.events
    assert s.get_events_in_range(last + 1) == []


def test_tree_navigation(recorded):
    s = load_session(recorded[0])
    agent = next(sp for sp in s.spans if sp.name == "invoke_agent api-test")
    tool = next(sp for sp in s.spans if sp.name == "execute_tool double")
    assert [e.id for e in s.ancestors(tool.entry_id)] == [agent.entry_id, s.root.id]
    assert tool.entry_id in [e.id for e in s.children(agent.entry_id)]
    assert s.ancestors(s.root.id) == [] and s.children("nope") == []
    assert s.find(tool.entry_id) is s.entry(tool.entry_id)
    prefix, seq = tool.entry_id.rsplit("-", 1)
    with pytest.raises(EntryLookupError, match=rf"ambiguous: '{prefix}-' matches {s.root.id}, "):
        s.find(prefix + "-")
    with pytest.raises(EntryLookupError, match="no entry matches 'zzz'"):
        s.find("zzz")
    with pytest.raises(EntryLookupError):
        s.conversation("zzz")


def test_streaming_gives_the_same_events(recorded):
    jsonl, zip_path = recorded
    s = load_session(jsonl)
    assert [e.data for e in iter_events(zip_path)] == [e.data for e in s.events]


def test_a_directory_with_one_session_loads_it_and_with_several_names_them(recorded, tmp_path):
    jsonl, zip_path = recorded
    s = load_session(jsonl.parent)
    assert isinstance(s, LoadedSession) and s.path == jsonl
    (jsonl.parent / "session-other.jsonl").write_bytes(jsonl.read_bytes())
    with pytest.raises(fmt.SessionFormatError, match=r"a directory of 2 sessions \(session-"):
        load_session(jsonl.parent)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(unpacked)
    u = load_session(unpacked)
    assert [e.data for e in u.events] == [e.data for e in s.events] and u.snapshots == s.snapshots


def test_replay_and_resume_delegate_to_their_modules(recorded):
    s = load_session(recorded[0])
    assert s.rebuild_context() == resume.rebuild_context(s, until=None)
    seen: list[object] = []
    s.replay_events(seen.append)
    direct: list[object] = []
    replay.replay_events(s, direct.append)
    assert len(seen) == len(direct) > 0


def test_the_reading_errors_are_public_names(tmp_path):
    """The README names ``SessionFormatError``: ``oat.SessionFormatError`` catches what
    ``oat.load_session`` raises (and ``oat.SessionReadWarning`` is what it warns)."""
    assert {"SessionFormatError", "SessionReadWarning"} <= set(oat.__all__) & set(dir(oat))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    with pytest.raises(oat.SessionFormatError, match=r"bad\.jsonl:1: not JSON"):
        oat.load_session(bad)
    from otel_agent_trace.offline import SessionReadWarning

    assert oat.SessionReadWarning is SessionReadWarning
