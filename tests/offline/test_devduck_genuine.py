"""DevDuck session ZIPs written by devduck 1.15.7's own recorder (:mod:`tests.services.devduck`),
read as DevDuck's users read them: a session whose 10,000-event ring dropped its oldest events,
``session.start`` among them, and sessions of a few milliseconds."""

from __future__ import annotations

import json
import re
import warnings
import zipfile
from pathlib import Path

import pytest

from otel_agent_trace.offline import SessionReadWarning, load_session
from otel_agent_trace.offline.analysis import analyze_session
from tests.cli.helpers import cli
from tests.services import devduck

OPENS = 10_051  # with session.start: 10,052 events before the stop, 10,053 with it


@pytest.fixture(scope="module")
def python() -> Path:
    return devduck.ensure_installed()


@pytest.fixture(scope="module")
def ring(python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ring") / "ring-1.zip"
    return devduck.record(out, session_id="ring-1", opens=OPENS, python=python)


def _members(path: Path) -> tuple[list[dict], dict]:
    with zipfile.ZipFile(path) as zf:
        events = [json.loads(line) for line in zf.read("events.jsonl").decode().split("\n")]
        return events, json.loads(zf.read("metadata.json"))


def test_the_recorder_wrapped_its_ring(ring):
    # what DevDuck itself wrote: the last 10,000 events, session.start gone, the count in metadata
    events, meta = _members(ring)
    assert len(events) == 10_000 and meta["total_events"] == OPENS + 1
    assert events[0]["event_type"] == "file.open" and events[-1]["event_type"] == "session.stop"
    assert not any(e["event_type"] == "session.start" for e in events)


def test_a_wrapped_ring_loads_named_by_its_metadata_and_says_what_was_dropped(ring):
    with pytest.warns(SessionReadWarning, match=r"dropped the first 53 of this session, session.start among"):
        session = load_session(ring)
    assert session.session_id == "ring-1"  # metadata.json's, not devduck-0000
    assert len(session.events) == 10_000  # one entry a line
    # 10,052 counted before the stop + the stop itself − 10,000 kept
    assert session.evicted_events == 53
    first = session.events[0]
    assert first.type == "file.open" and session.children(first.id) == []  # no false parent
    assert all(e.parent_id == "" for e in session.events)
    assert first.data["evicted_start"] == {"session_id": "ring-1", "total_events": OPENS + 1}


def test_view_makes_no_file_open_the_parent_of_the_others(ring):
    done = cli("view", "--json", str(ring), timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    entries = [r for r in rows if r.get("type") == "file.open"]
    assert len(entries) == 9_999  # the opens the ring kept (the stop is the 10,000th)
    assert {r["parent_id"] for r in entries} == {""}


def test_analyze_names_a_wrapped_ring_by_its_metadata(ring):
    result = analyze_session(ring)
    assert result["session_id"] == "ring-1"
    assert result["counts"]["sys_events"]["file.open"] == 9_999


def test_analyze_counts_the_lines_says_what_was_dropped_and_takes_off_for_the_start(ring):
    result = analyze_session(ring)
    assert result["entries"] == 10_000  # not 10,001: the start made from metadata.json is no line
    assert result["events_evicted"] == 53
    reason = "no session.start: DevDuck's ring of 10,000 events dropped the first 53 of the session"
    assert result["health"]["reasons"][0] == reason  # DM's and our penalty for a missing start
    assert result["health"]["score"] == 0.6  # − 0.2 no start, − 0.2 no verification
    done = cli("analyze", str(ring), timeout=120)
    assert done.stdout.splitlines()[0].startswith("ring-1  ")
    assert (
        "evicted: DevDuck's ring of 10,000 events dropped the first 53 events of this session" in done.stdout
    )
    report = cli("report", str(ring), timeout=120).stdout
    assert "ring-1" in report and "devduck-0000" not in report


@pytest.fixture(scope="module")
def short(python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("short") / "short-1.zip"
    return devduck.record(out, session_id="short-1", opens=3, snapshots=1, python=python)


def test_a_session_of_milliseconds_shows_what_was_measured(short):
    _, meta = _members(short)
    measured = meta["duration_seconds"]
    assert 0 < measured < 1  # DevDuck's own measure of a few milliseconds
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing was dropped: nothing to say
        session = load_session(short)
    assert session.duration == measured and session.evicted_events == 0
    shown = re.fullmatch(
        r"LoadedSession\(id=short-1, events=7, snapshots=1, duration=([0-9.]+)s\)", repr(session)
    )
    assert shown is not None, repr(session)
    assert float(shown[1]) != 0 and abs(float(shown[1]) - measured) <= measured * 0.01  # 3 digits
    assert session.events[0].type == "session.start"
    assert {e.parent_id for e in session.events[1:]} == {session.events[0].id}  # under the start
