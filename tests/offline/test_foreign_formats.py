"""DevDuck session ZIPs and DM-Code-Agent JSONL load into the same model, with their own event
types, real timestamps, ids, layers, duration and completeness — and nothing in them is run."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timezone

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import (
    EntryLookupError,
    SessionReadWarning,
    iter_entries,
    iter_events,
    load_session,
)

from .samples import RUN_ID, SECOND, T0, devduck_events, dm_entries, write_devduck_zip, write_dm


def test_a_devduck_zip_loads_with_its_own_event_types_times_and_layers(tmp_path):
    session = load_session(write_devduck_zip(tmp_path / "session-20240203-151052.zip"))
    assert (
        repr(session) == "LoadedSession(id=session-20240203-151052, events=13, snapshots=1, duration=10.0s)"
    )
    assert len(session.get_events_by_type("file.open")) == 5
    assert [e.data["url"] for e in session.get_events_by_type("http.get")] == ["https://example.invalid/x"]
    assert len(session.get_events_by_type("tool.call")) == 1
    assert len(session.get_events_by_type("snapshot.created")) == 1
    assert len(session.get_events_by_layer("sys")) == 6
    assert len(session.get_events_by_layer("tool")) == 2
    assert session.events[0].timestamp_ns == T0 and session.events[-1].timestamp_ns == T0 + 10 * SECOND
    assert [e.id for e in session.events[:2]] == ["devduck-0000", "devduck-0001"]
    assert all(e.parent_id == "devduck-0000" for e in session.events[1:])
    assert session.complete and session.duration == 10.0
    assert session.events[2].data["args"] == {
        "command": "ls -la"
    }  # DevDuck's data, as DevDuck's users read it
    assert session.metadata["hostname"] == "duck"
    assert session.get_snapshot(1)["agent_messages"][1]["content"] == "Found 3 issues in full"
    before = session.get_events_until_snapshot(1)
    assert [e.type for e in before][-1] == "message" and len(before) == 11
    (tool,) = session.spans
    assert tool.name == "execute_tool shell" and tool.duration_s == 1.0 and tool.finished
    assert session.conversation()[-1]["content"] == "Found 3 issues in full"
    assert session.conversation("devduck-0001") == [{"role": "user", "content": "analyze this code"}]
    assert json.dumps(session.to_dict())  # JSON all the way down


def test_a_devduck_zip_cut_by_its_ring_buffer_still_loads(tmp_path):
    events = devduck_events()[3:]  # the ring buffer dropped the oldest events, session.start first
    session = load_session(write_devduck_zip(tmp_path / "cut.zip", events))
    assert session.root.type == "file.open" and len(session.events) == len(events)
    assert session.complete


def test_a_devduck_pickle_is_never_loaded(tmp_path):
    marker = tmp_path / "code-ran"
    path = write_devduck_zip(tmp_path / "trap.zip", trap=marker, **{"extra.pkl": b"x", "state.dill": b"y"})
    session = load_session(path)
    assert len(session.events) == 13
    list(iter_entries(path))
    assert not marker.exists(), "loading a DevDuck ZIP ran code from its pickle"


@pytest.mark.parametrize("legacy", [False, True], ids=["schema-2.0", "legacy"])
def test_a_dm_session_loads_with_its_events_ids_and_times(tmp_path, legacy):
    session = load_session(write_dm(tmp_path / "run.jsonl", legacy=legacy))
    assert len(session.events) == 8
    ids = [e.id for e in session.events]
    if legacy:
        assert ids == [f"legacy-{i:04d}" for i in range(8)]
    else:
        assert ids == [e["id"] for e in dm_entries()]
    assert [e.parent_id for e in session.events[1:]] == ids[:-1]  # each under the one before
    start = datetime(2024, 2, 3, 15, 10, 52, 250000, tzinfo=timezone.utc)
    assert session.events[0].timestamp_ns == int(start.timestamp()) * SECOND + 250_000_000
    assert session.duration == 3.5 and session.complete  # run_end's own measure, not the timestamps
    assert session.session_id == RUN_ID
    assert len(session.get_events_by_type("tool_call")) == 2
    assert {e.layer for e in session.get_events_by_type("tool_call")} == {"tool"}
    assert session.get_events_by_type("run_start")[0].data["task"] == "Fix retry.py and run tests"
    assert [m["role"] for m in session.conversation()] == ["user", "assistant"]
    run, read, tests = session.spans
    assert run.name == "run" and run.duration_s == 6.0 and run.status == fmt.STATUS_OK
    assert read.name == "execute_tool read_file" and tests.status == fmt.STATUS_ERROR
    assert session.ancestors(ids[3])[-1].id == ids[0]
    assert session.find(ids[5][:-1] + "5").id == ids[5]
    with pytest.raises(EntryLookupError, match="ambiguous: .* matches"):
        session.find(ids[0][:4])
    assert [e.type for e in iter_events(tmp_path / "run.jsonl")] == [e.type for e in session.events]


def test_a_dm_run_without_run_end_is_not_complete(tmp_path):
    path = tmp_path / "killed.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in dm_entries()[:-1]))
    session = load_session(path)
    assert not session.complete and session.spans[0].status == fmt.STATUS_UNFINISHED


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({"event": "message", "timestamp": "2024-02-03T15:10:52Z", "payload": [1]}, "'payload' is list"),
        ({"event": 7, "timestamp": "2024-02-03T15:10:52Z", "run_id": "x"}, "'event' is int"),
    ],
)
def test_a_bad_dm_line_is_an_error_naming_file_and_line(tmp_path, line, reason):
    path = tmp_path / "bad.jsonl"
    entries = dm_entries()
    path.write_text("".join(json.dumps(e) + "\n" for e in [*entries[:2], line, *entries[2:]]))
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}:3: .*{reason}"):
        load_session(path)
    with pytest.warns(SessionReadWarning, match=rf"^{path}:3: .*skipped"):
        assert len(load_session(path, lenient=True).events) == len(entries)


def test_a_dm_timestamp_that_is_not_iso_8601_is_no_time_not_an_error(tmp_path):
    # DM never parses timestamps (its own tests write "t0"): such an entry is read, time unknown.
    path = tmp_path / "t0.jsonl"
    entries = dm_entries(legacy=True)
    for n, entry in enumerate(entries):
        entry["timestamp"] = f"t{n}" if n % 2 else n
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    session = load_session(path)
    assert len(session.events) == len(entries) and not session.issues
    assert {e.timestamp_ns for e in session.events} == {0}


def test_a_bad_devduck_line_names_the_member_and_line(tmp_path):
    events = devduck_events()
    events[4]["timestamp_ns"] = "NaN"
    path = write_devduck_zip(tmp_path / "bad.zip", events)
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}!events.jsonl:5: 'timestamp_ns' is 'NaN'"):
        load_session(path)


def test_an_unpacked_zip_directory_loads_like_the_zip(tmp_path):
    path = write_devduck_zip(tmp_path / "s.zip")
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(unpacked)
    a, b = load_session(path), load_session(unpacked)
    assert [e.data for e in a.events] == [e.data for e in b.events]
    assert a.snapshots == b.snapshots and a.metadata == b.metadata


def test_dm_checkpoints_are_snapshots(tmp_path):
    entries = dm_entries()
    checkpoint = {
        "id": f"{RUN_ID[:8]}-0099",
        "parent_id": entries[4]["id"],
        "timestamp": "2024-02-03T15:10:57+00:00",
        "run_id": RUN_ID,
        "event": "checkpoint",
        "payload": {"messages": [{"role": "user", "content": "Fix retry.py and run tests"}], "step": 2},
    }
    path = tmp_path / "checkpointed.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*entries[:5], checkpoint, *entries[5:]]))
    session = load_session(path)
    (snapshot,) = session.snapshots
    assert snapshot["snapshot_id"] == 1 and snapshot["agent_messages_count"] == 1
    assert snapshot["events_since_last"] == 5
    assert [e.type for e in session.get_events_until_snapshot(1)][-1] == "message"
    assert session.get_snapshot(1) is snapshot
