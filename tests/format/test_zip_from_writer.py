"""The ZIP export of the session's own file from what its writer knows of it (``TierWriter``: the
lines it wrote, where its snapshot lines are): the same ``snapshots.json``, ``resume.json`` and
entry count as ``build_snapshots`` gives from every entry; and wherever the file is not as the
writer says (a child process's file, a failed write, a line added by hand, a file changed in
place), the lines are scanned as before, with the same result."""

from __future__ import annotations

import os
import types
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.recording import archive, snapshot_scan, snapshot_spool
from otel_agent_trace.session_format import reader
from tests.format.zip_sessions import record_session, resolved


def _stop(s: Any) -> list[Path]:
    """Stop the session; the ZIPs it wrote are set aside (each test exports again)."""
    zips = [Path(p) for p in s.stop()]
    for written in zips:
        written.rename(written.with_suffix(".recorded"))
    return zips


def _members(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        return {name: orjson.loads(zf.read(name)) for name in zf.namelist() if name != fmt.ZIP_EVENTS}


def _export(recorder: Any, writer: Any) -> dict[str, Any]:
    """Export as the recorder does at stop (with ``writer``: the real one, or one that knows only
    the file's path and tier); the ZIP's members but events.jsonl, which is checked here."""
    out = archive.export_zip(recorder, writer)
    files = fmt.child_files(writer.path.parent, recorder.session_id, writer.path, writer.tier)
    with zipfile.ZipFile(out) as zf:
        assert zf.read(fmt.ZIP_EVENTS) == b"".join(p.read_bytes() for p in files)
    members = _members(out)
    out.unlink()
    assert members[fmt.ZIP_METADATA]["snapshots_format"] == 3
    members["raw " + fmt.ZIP_SNAPSHOTS] = members[fmt.ZIP_SNAPSHOTS]
    members[fmt.ZIP_SNAPSHOTS] = resolved(members[fmt.ZIP_SNAPSHOTS], files)
    return members


def _expected(writer: Any, session_id: str) -> tuple[list[dict[str, Any]], int]:
    files = fmt.child_files(writer.path.parent, session_id, writer.path, writer.tier)
    snapshots = fmt.build_snapshots(lambda: fmt.iter_files(files, []))
    return snapshots, sum(p.read_bytes().count(b"\n") for p in files)


def _doubted(writer: Any) -> bool:
    """Whether the scan of the writer's file from what the writer knows finds it not so."""
    written = snapshot_scan.Written.of(writer, writer.path)
    reader = snapshot_scan.ReadAhead([writer.path], None)
    try:
        snapshot_scan.scan([writer.path], reader, written, reader.chunks())
    except snapshot_spool.Doubt:
        return True
    finally:
        reader.close()
    return False


def _check(recorder: Any, writer: Any, *, known: bool) -> dict[str, Any]:
    """The export from the writer's knowledge (taken or not, as ``known`` says) is the reader's,
    and the export that scans the file gives the same members."""
    assert (snapshot_scan.Written.of(writer, writer.path) is not None) is known
    members = _export(recorder, writer)
    scanned = _export(recorder, types.SimpleNamespace(path=writer.path, tier=writer.tier))
    snapshots, lines = _expected(writer, recorder.session_id)
    assert members[fmt.ZIP_SNAPSHOTS] == snapshots
    assert members[fmt.ZIP_METADATA]["total_events"] == lines
    assert members[fmt.ZIP_METADATA]["total_snapshots"] == len(snapshots)
    assert members[fmt.ZIP_RESUME]["messages"] == snapshots[-1]["agent_messages"]
    for name in (fmt.ZIP_SNAPSHOTS, "raw " + fmt.ZIP_SNAPSHOTS, fmt.ZIP_RESUME):
        assert members[name] == scanned[name]
    for key in ("total_events", "total_snapshots"):
        assert members[fmt.ZIP_METADATA][key] == scanned[fmt.ZIP_METADATA][key]
    return members


def test_the_writer_knows_its_lines_and_snapshot_offsets(provider, tmp_path):
    s = record_session(tmp_path / "sessions")
    _stop(s)
    for tier in s._recorder.tiers:
        writer = tier.writer
        data = writer.path.read_bytes()
        assert not writer.failed and not writer.partial
        assert writer.written == len(data)
        assert writer.entries == data.count(b"\n")
        starts = [0] + [i + 1 for i in range(len(data)) if data[i] == 10][:-1]
        snapshot_lines = [
            n
            for n, at in enumerate(starts)
            if orjson.loads(data[at : data.index(b"\n", at)])["type"] == "snapshot"
        ]
        assert list(writer.snapshot_lines) == snapshot_lines
        assert list(writer.snapshot_offsets) == [starts[n] for n in snapshot_lines]


@pytest.mark.parametrize("tier", [0, 1], ids=["trace", "checkpoint"])
def test_the_zip_written_at_stop_is_the_readers(provider, tmp_path, chunk, tier):
    s = record_session(tmp_path / "sessions")
    recorded = _stop(s)
    writer = s._recorder.tiers[tier].writer
    members = _check(s._recorder, writer, known=True)
    assert not _doubted(writer)
    at_stop = _members(recorded[tier].with_suffix(".recorded"))
    assert members["raw " + fmt.ZIP_SNAPSHOTS] == at_stop[fmt.ZIP_SNAPSHOTS]
    assert members[fmt.ZIP_RESUME] == at_stop[fmt.ZIP_RESUME]
    zipped = oat.load_session(recorded[tier].with_suffix(".recorded"))
    assert zipped.snapshots == oat.load_session(writer.path).snapshots


def test_without_a_thread(provider, tmp_path, monkeypatch):
    s = record_session(tmp_path / "sessions", turns=12)
    _stop(s)

    def refuse(*args: Any) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(snapshot_scan._thread, "start_new_thread", refuse)
    _check(s._recorder, s._recorder.tiers[0].writer, known=True)


def test_a_child_processs_file_is_scanned(provider, tmp_path, chunk):
    """The parent's file from its writer, a child's (here written beside it by hand, as a forked
    child's writer names it) scanned: its snapshots and entries follow the parent's."""
    s = record_session(tmp_path / "sessions", turns=10)
    _stop(s)
    writer = s._recorder.tiers[0].writer
    first = orjson.loads(writer.path.open("rb").readline())
    child = writer.path.with_name(f"{s.session_id}.p4242.jsonl")
    lines = [
        {**first, "id": "c-0000", "parent_id": first["id"], "type": "session.join"},
        {"id": "c-0001", "parent_id": "c-0000", "type": "message", "layer": "agent", "ts": 5, "digest": "d"}
        | {"role": "user", "content": "from the child snapshot"},
        {"id": "c-0002", "parent_id": "c-0000", "type": "span.end", "layer": "tool", "ts": 6, "name": "t"},
        {"id": "c-0003", "parent_id": "c-0000", "type": "snapshot", "layer": "agent", "ts": 7}
        | {"snapshot_id": 99, "message_ids": ["c-0001", f"{writer.prefix}-0003"]},
    ]
    child.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    members = _check(s._recorder, writer, known=True)
    assert members[fmt.ZIP_SNAPSHOTS][-1]["snapshot_id"] == 99
    assert members[fmt.ZIP_SNAPSHOTS][-1]["agent_messages"][0]["content"] == "from the child snapshot"


def test_a_failed_write_leaves_the_file_to_the_scan(provider, tmp_path, chunk):
    """Writes that fail (the descriptor made read-only for a few turns) leave lines out: the
    writer says so, and the file is scanned."""
    saved: list[int] = []

    def during(s: Any, turn: int) -> None:
        writer = s._recorder.tiers[0].writer
        if turn == 5:
            saved.append(os.dup(writer._fd))
            readonly = os.open(writer.path, os.O_RDONLY)
            os.dup2(readonly, writer._fd)
            os.close(readonly)
        elif turn == 8:
            os.dup2(saved[0], writer._fd)
            os.close(saved[0])

    s = record_session(tmp_path / "sessions", turns=14, during=during)
    _stop(s)
    writer = s._recorder.tiers[0].writer
    assert writer.failed
    _check(s._recorder, writer, known=False)


def test_a_line_added_by_hand_leaves_the_file_to_the_scan(provider, tmp_path, chunk):
    s = record_session(tmp_path / "sessions", turns=10)
    _stop(s)
    writer = s._recorder.tiers[0].writer
    p = writer.prefix
    with writer.path.open("ab") as out:
        out.write(orjson.dumps({"id": f"{p}-9000", "parent_id": "", "type": "snapshot", "message_ids": []}))
        out.write(b"\n")
    members = _check(s._recorder, writer, known=False)
    assert members[fmt.ZIP_SNAPSHOTS][-1]["agent_messages"] == []


@pytest.mark.parametrize("change", ["not a snapshot", "shifted", "torn"])
def test_a_file_changed_in_place_is_scanned_again(provider, tmp_path, chunk, change):
    """The same size as written, other lines: the writer's offsets are found wrong as the file is
    copied, and the files are read again and scanned (the copy in the ZIP is the file as it is)."""
    s = record_session(tmp_path / "sessions", turns=10)
    _stop(s)
    writer = s._recorder.tiers[0].writer
    data = bytearray(writer.path.read_bytes())
    at = writer.snapshot_offsets[3]
    end = data.index(b"\n", at)
    if change == "not a snapshot":
        data[at:end] = data[at:end].replace(b'"type":"snapshot"', b'"type":"snapshoT"')
    elif change == "shifted":  # a letter taken out of a digest before the line, a space put after
        data[end + 1 : end + 1] = b" "
        del data[data.rindex(b'"digest":"', 0, at) + 10]
    else:  # the last line torn, the same size: a line added before it
        data[-40:] = b"\n" + data[-40:-1]
    assert len(data) == writer.written
    writer.path.write_bytes(bytes(data))
    assert _doubted(writer)
    _check(s._recorder, writer, known=True)


def test_a_file_changed_in_place_without_a_thread(provider, tmp_path, monkeypatch):
    s = record_session(tmp_path / "sessions", turns=10)
    _stop(s)
    writer = s._recorder.tiers[0].writer
    data = writer.path.read_bytes()
    at = writer.snapshot_offsets[-1]
    writer.path.write_bytes(data[:at] + data[at:].replace(b'"type":"snapshot"', b'"type":"snapshoT"', 1))

    def refuse(*args: Any) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(snapshot_scan._thread, "start_new_thread", refuse)
    assert _doubted(writer)
    _check(s._recorder, writer, known=True)


@pytest.mark.parametrize("chunk", [799, 301, 64])  # (shorter than the cap, as 4 MB is than 32)
def test_lines_longer_than_the_reader_reads(provider, tmp_path, monkeypatch, chunk):
    """Lines over the reader's cap (here 800 bytes: the root entry, snapshots with a long state,
    long messages) are dropped by the reader and counted by the export, from the writer's
    knowledge as by the scan."""
    monkeypatch.setattr(snapshot_scan, "_CHUNK", chunk)
    # The root entry holds the working directory: a long one makes it longer than the cap
    # whatever else it holds (argv, packages: shorter under CI than from a shell).
    long_cwd = tmp_path / ("c" * 240)
    long_cwd.mkdir()
    monkeypatch.chdir(long_cwd)

    def during(s: Any, turn: int) -> None:
        if turn in (6, 7):
            pad = {"pad": "p" * 900}
            oat.snapshot(f"long {turn}", messages=[{"role": "user", "content": "z"}], state=pad)

    s = record_session(tmp_path / "sessions", turns=16, during=during)
    _stop(s)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 800)
    monkeypatch.setattr(snapshot_scan, "LONGEST", 801)
    monkeypatch.setattr(snapshot_spool, "LONGEST", 801)
    writer = s._recorder.tiers[1].writer  # (checkpoint: the messages' text is kept, some are long)
    data = writer.path.read_bytes()
    assert data.index(b"\n") > 800
    assert any(end - at > 800 for at, end in ((a, data.index(b"\n", a)) for a in writer.snapshot_offsets))
    assert not _doubted(writer)
    members = _export(s._recorder, writer)
    scanned = _export(s._recorder, types.SimpleNamespace(path=writer.path, tier=writer.tier))
    for name in (fmt.ZIP_SNAPSHOTS, fmt.ZIP_RESUME):
        assert members[name] == scanned[name]
    assert members[fmt.ZIP_METADATA]["total_events"] == data.count(b"\n")  # lines, long ones too
    snapshots, _ = _expected(writer, s.session_id)  # (events_since_last: the reader's skip them)
    assert [(x["snapshot_id"], x["agent_messages"]) for x in members[fmt.ZIP_SNAPSHOTS]] == [
        (x["snapshot_id"], x["agent_messages"]) for x in snapshots
    ]
    assert any("missing" in m for snap in members[fmt.ZIP_SNAPSHOTS] for m in snap["agent_messages"])
    assert len(members[fmt.ZIP_SNAPSHOTS]) < len(writer.snapshot_offsets)  # (the long ones dropped)
