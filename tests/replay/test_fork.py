"""Fork copies the entries up to the fork point and appends one ``fork`` entry; ``--at`` takes an
id or a unique prefix; the output is never overwritten; a checkpoint fork stays private and says
how to resume it, a trace fork says why it cannot be resumed."""

from __future__ import annotations

import json
import stat

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.fork import fork_session
from otel_agent_trace.offline.replay import EntryNotFound

from .conftest import cli


def _snapshot_id(path, n):
    return next(
        e.id for e in load_session(path).events if e.type == fmt.SNAPSHOT and e.data["snapshot_id"] == n
    )


def test_fork_copies_up_to_the_point_and_links_back_and_a_unique_prefix_finds_an_entry(notes, tmp_path):
    point = _snapshot_id(notes.checkpoint, 2)
    source = load_session(notes.checkpoint)
    ids = [e.id for e in source.events]
    out = tmp_path / "branch.checkpoint.jsonl"
    done = cli("fork", str(notes.checkpoint), "--at", point, "--output", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["id"] for e in lines[:-1]] == ids[: ids.index(point) + 1]
    assert lines[:-1] == [e.data for e in source.events[: ids.index(point) + 1]]  # copied verbatim
    fork = lines[-1]
    assert fork["type"] == "fork" and fork["parent_id"] == point
    assert fork["source_session"] == source.session_id and fork["forked_from_entry_id"] == point
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "resumable: the conversation at the fork point, 6 messages" in done.stdout
    assert f"otel-agent-trace resume {out} --at {point} --agent" in done.stdout
    branch = load_session(out)
    assert branch.tier == "checkpoint" and len(branch.snapshots) == 2

    # The fork entry's id has a prefix of its own: six characters of it find it.
    again = tmp_path / "branch2.checkpoint.jsonl"
    done = cli("fork", str(out), "--at", fork["id"][:6], "--output", str(again), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    second = [json.loads(line) for line in again.read_text().splitlines()]
    assert second[:-1] == lines and second[-1]["parent_id"] == fork["id"]


def test_an_existing_output_is_never_overwritten(notes, tmp_path):
    out = tmp_path / "taken.jsonl"
    out.write_text("mine\n")
    point = _snapshot_id(notes.checkpoint, 1)
    done = cli("fork", str(notes.checkpoint), "--at", point, "--output", str(out), cwd=tmp_path)
    assert done.returncode == 2
    assert "exists: a fork never overwrites a file" in done.stderr
    assert out.read_text() == "mine\n"
    with pytest.raises(FileExistsError):
        fork_session(load_session(notes.checkpoint), point, out)


def test_ambiguous_and_unknown_ids_are_clear_errors_listing_candidates(notes, tmp_path):
    session = load_session(notes.checkpoint)
    prefix = session.events[0].id.split("-")[0] + "-00"
    done = cli("fork", str(notes.checkpoint), "--at", prefix, cwd=tmp_path)
    assert done.returncode == 2
    assert "is ambiguous: matches" in done.stderr and session.events[1].id in done.stderr
    with pytest.raises(EntryNotFound, match="no entry matches 'zzz'"):
        fork_session(session, "zzz", tmp_path / "x.jsonl")
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_trace_fork_says_why_it_cannot_be_resumed(notes, tmp_path):
    point = _snapshot_id(notes.trace, 3)
    result = fork_session(load_session(notes.trace), point, tmp_path / "t.jsonl")
    assert not result.resumable and "trace-tier" in result.reason
    assert stat.S_IMODE((tmp_path / "t.jsonl").stat().st_mode) == 0o644


def test_before_any_conversation_a_checkpoint_fork_is_not_resumable(notes, tmp_path):
    session = load_session(notes.checkpoint)
    result = fork_session(session, session.events[1].id)
    assert result.path.parent == notes.checkpoint.parent and result.path.name.endswith(".checkpoint.jsonl")
    assert not result.resumable and result.reason == "no conversation at or before the fork point"
    result.path.unlink()
