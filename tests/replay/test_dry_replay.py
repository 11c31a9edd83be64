"""Dry replay walks a recorded timeline, checks it and runs nothing: on complete files (JSONL and
ZIP, both tiers) and on a file cut as a killed process leaves it."""

from __future__ import annotations

import json
import warnings

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.replay import EntryNotFound, replay_events

from .conftest import cli


@pytest.mark.parametrize("which", ["trace", "checkpoint", "trace_zip", "checkpoint_zip"])
def test_a_complete_recording_walks_in_order_with_no_findings(notes, which):
    session = load_session(getattr(notes, which))
    seen = []
    report = replay_events(session, seen.append)
    assert [e.id for e in seen] == [e.id for e in session.events]
    assert report.ok and report.complete and report.findings == []
    assert report.counts["session.start"] == 1 and report.counts["snapshot"] == 6
    assert not (notes.cwd / "ws").exists()


def test_a_range_by_prefix_and_a_callback_that_stops(notes):
    session = load_session(notes.checkpoint)
    ids = [e.id for e in session.events]
    seen = []
    report = replay_events(session, seen.append, start=ids[3], end=ids[7])
    assert [e.id for e in seen] == ids[3:8]
    assert (report.entries, report.first_id, report.last_id) == (5, ids[3], ids[7])
    stopped = replay_events(session, lambda e: e.type != fmt.SNAPSHOT)
    assert stopped.stopped_early and session.entry(stopped.last_id).type == fmt.SNAPSHOT
    with pytest.raises(EntryNotFound, match="ambiguous: matches"):
        replay_events(session, start=ids[0][:9])


def test_a_crash_cut_file_reports_unfinished_spans_and_the_torn_line(notes, tmp_path):
    lines = notes.checkpoint.read_bytes().splitlines(keepends=True)
    # Cut inside the line after the read_note tool started: its span and the agent's never end.
    start = next(i for i, raw in enumerate(lines) if b'"span.start"' in raw and b"read_note" in raw)
    cut = tmp_path / "killed.checkpoint.jsonl"
    cut.write_bytes(b"".join(lines[: start + 1]) + lines[start + 1][:25])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = load_session(cut)
    report = replay_events(session)
    assert report.ok and not report.complete
    kinds = sorted(f.kind for f in report.findings)
    assert kinds == ["read_issue", "unfinished_span", "unfinished_span"]
    names = {f.detail.split(" (")[0] for f in report.findings if f.kind == "unfinished_span"}
    assert names == {"invoke_agent notes-agent", "execute_tool read_note"}

    done = cli("replay", str(cut), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "unfinished (no session.end" in done.stdout
    assert "note: unfinished_span" in done.stdout and "timeline consistent" in done.stdout


def test_a_broken_tree_is_an_error(notes, tmp_path):
    lines = notes.checkpoint.read_text().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    # Drop a tool span's start entry that has entries under it (write_note's: its file.open and
    # its end): they have no parent any more. (A tool call with nothing under it may be one
    # span.end line, with no start to drop.)
    entries = [json.loads(raw) for raw in lines]
    parents = {entry["parent_id"] for entry in entries}
    start = next(
        i
        for i, entry in enumerate(entries)
        if entry["type"] == "span.start" and entry["layer"] == "tool" and entry["id"] in parents
    )
    assert "execute_tool write_note" in lines[start]
    broken.write_text("".join(lines[:start] + lines[start + 1 :]))
    with warnings.catch_warnings():  # the loader may note the orphan too
        warnings.simplefilter("ignore")
        report = replay_events(load_session(broken))
    assert not report.ok
    assert any(f.kind == "missing_parent" for f in report.findings)
    done = cli("replay", str(broken), cwd=tmp_path)
    assert done.returncode == 1 and "error: missing_parent" in done.stdout


def test_control_characters_from_a_file_never_reach_the_terminal(notes, tmp_path):
    text = notes.checkpoint.read_text()
    evil = tmp_path / "evil.jsonl"
    evil.write_text(text.replace('"name":"execute_tool count_words"', '"name":"\\u001b]0;pwned\\u0007x"', 1))
    done = cli("replay", "-v", str(evil), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\\x1b]0;pwned\\x07x" in done.stdout
