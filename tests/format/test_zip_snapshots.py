"""The ZIP's ``snapshots.json`` and entry count, written at exit from a scan of the session's lines
(``recording/archive``), are those the reader builds from every entry (``build_snapshots``):
whatever the chunk boundaries, where the named messages are, and however the lines are written."""

from __future__ import annotations

import os
import sys
import time
import types
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.recording import archive, snapshot_scan, snapshot_spool, zip_container
from otel_agent_trace.session_format import reader
from otel_agent_trace.settings import Settings
from tests.format.zip_sessions import record_session, resolved

SESSION = "session-20261202-120000-0a0b0c0d"


def _export(path: Path, tier: str = "trace") -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Export ``path`` (and its child files) as the recorder does at stop: the ZIP's snapshots,
    metadata and resume members."""
    first = orjson.loads(path.open("rb").readline())
    recorder = types.SimpleNamespace(
        session_id=first.get("session_id", SESSION),
        name="zip-test",
        started_ns=1_700_000_000 * 10**9,
        stopped_ns=1_700_000_001 * 10**9,
        counts={},
        user_metadata={},
        is_child=False,
        env=types.SimpleNamespace(localtime=time.gmtime, clock=time.time_ns),
    )
    writer = types.SimpleNamespace(path=path, tier=tier)
    out = archive.export_zip(recorder, writer)  # type: ignore[arg-type]
    with zipfile.ZipFile(out) as zf:
        assert zf.testzip() is None
        members = {name: orjson.loads(zf.read(name)) for name in zf.namelist() if name != fmt.ZIP_EVENTS}
        assert zf.read(fmt.ZIP_EVENTS) == b"".join(p.read_bytes() for p in _files(path, tier))
    out.unlink()
    assert members[fmt.ZIP_METADATA]["snapshots_format"] == fmt.ZIP_SNAPSHOTS_FORMAT == 3
    snapshots = resolved(members[fmt.ZIP_SNAPSHOTS], _files(path, tier))
    return snapshots, members[fmt.ZIP_METADATA], members[fmt.ZIP_RESUME]


def _files(path: Path, tier: str = "trace") -> list[Path]:
    return fmt.child_files(path.parent, orjson.loads(path.open("rb").readline())["session_id"], path, tier)


def _expected(path: Path, tier: str = "trace") -> list[dict[str, Any]]:
    files = _files(path, tier)
    return fmt.build_snapshots(lambda: fmt.iter_files(files, []))


def _lines(path: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in _files(path))


@pytest.fixture
def recorded(provider: Any, tmp_path: Path) -> tuple[Path, Path]:
    """A session recorded in both tiers (``record_session``, 40 turns: a snapshot each), its ZIPs
    set aside: each test exports again."""
    s = record_session(tmp_path / "sessions", turns=40)
    trace_file, checkpoint_file = s.files
    for written in s.stop():
        Path(written).rename(Path(written).with_suffix(".recorded"))
    return trace_file, checkpoint_file


@pytest.mark.parametrize("tier", ["trace", "checkpoint"])
def test_a_recorded_session_gives_the_readers_snapshots_at_any_chunk_size(recorded, chunk, tier):
    path = recorded[0] if tier == "trace" else recorded[1]
    interval = sys.getswitchinterval()
    snapshots, metadata, resume = _export(path, tier)
    assert sys.getswitchinterval() == interval
    assert snapshots == _expected(path, tier)
    assert metadata["total_events"] == _lines(path) == len(list(fmt.iter_files([path])))
    assert metadata["total_snapshots"] == len(snapshots) == 40
    assert resume["messages"] == snapshots[-1]["agent_messages"]


def test_the_exported_zip_loads_with_the_jsonls_snapshots(recorded):
    for path in recorded:
        zipped = oat.load_session(path.with_suffix(".recorded"))
        assert zipped.snapshots == oat.load_session(path).snapshots


def _write(directory: Path, lines: list[Any], name: str = SESSION) -> Path:
    """A session file of ``lines`` (dicts are written as the writer writes them, bytes as given)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.jsonl"
    path.write_bytes(
        b"".join(line if isinstance(line, bytes) else orjson.dumps(line) + b"\n" for line in lines)
    )
    return path


def _root(version: str = "1.1", **extra: Any) -> dict[str, Any]:
    meta = {"format": fmt.FORMAT_NAME, "format_version": version}
    root = {"id": "r-0000", "parent_id": "", "type": "session.start", "layer": "agent", "ts": 1}
    return {**root, "session_id": SESSION, "tier": "trace", "metadata": meta, **extra}


def _message(seq: int, role: str = "user", **extra: Any) -> dict[str, Any]:
    entry = {
        "id": f"r-{seq:04d}",
        "parent_id": "r-0000",
        "type": "message",
        "layer": "agent",
        "ts": 1000 + seq,
    }
    return {**entry, "digest": f"d{seq}", "role": role, "content": f"text {seq}", **extra}


def _snapshot(seq: int, ids: Any, **extra: Any) -> dict[str, Any]:
    entry = {
        "id": f"r-{seq:04d}",
        "parent_id": "r-0000",
        "type": "snapshot",
        "layer": "agent",
        "ts": 2000 + seq,
    }
    return {**entry, "snapshot_id": seq, "description": f"s{seq}", "message_ids": ids, **extra}


def _span(seq: int, **extra: Any) -> dict[str, Any]:
    entry = {
        "id": f"r-{seq:04d}",
        "parent_id": "r-0000",
        "type": "span.end",
        "layer": "tool",
        "ts": 3000 + seq,
    }
    return {**entry, "name": "execute_tool t", "span_id": f"{seq:016x}", **extra}


def test_messages_anywhere_and_lines_written_by_hand(tmp_path, chunk):
    """Messages named long before their snapshot, after it, in a child file or not at all; lines
    with spaces, bookkeeping keys repeated in the message, a "message" token in other lines: each
    snapshot shows what the reader shows."""
    lines: list[Any] = [_root()]
    lines += [_message(i) for i in range(1, 30)]
    lines += [_span(i, content={"tool_result": '{"message": "x"}', "x": "message"}) for i in range(30, 60)]
    lines += [
        b'{"id": "r-0060", "parent_id": "r-0000", "type": "message", "role": "user", "content": "spaced"}\n',
        _message(61, span_id="00000000000000aa"),
        _message(62, message_keys={"id": "fc_1", "type": "function_call"}),
        _message(63, extra={"nested": {"id": "r-0001", "parent_id": "x", "type": "message"}}),
        b'{"id":"r-0064","parent_id":"r-0000","type":"message","layer":"agent","ts":-5,"digest":"d","role":"x"}\n',
        _snapshot(65, [f"r-{i:04d}" for i in (1, 28, 60, 61, 62, 63, 64, 70, 9999)]),
        _message(66, role="assistant"),
        _snapshot(67, ["r-0066", "r-0066", 5, None, ["r-0001"], {"x": 1}, "r-0002"]),
        _snapshot(68, "not a list"),
        _snapshot(69, ["r-0030", "r-0000", "r-0069"]),  # not messages: missing
        _message(70, role="late"),
        _message(71, type="span.end"),  # not a message after all (its last "type" counts)
        _snapshot(72, ["r-0071", "r-0066", "p-0002", "r-0074", "r-0075", "r-0076", "r-0077"]),
        b'{"id":"r-0074","parent_id":"r-0000","type":"message","layer":"agent","ts":1,"digest":"d","role":"u",}\n',
        b'{"id":"r-0075","parent_id":"r-0000","type":"message","role":"u",}\n',
        b'{"id":"r-0076","parent_id":"r-0000","type":"message","role":"u","id":5}\n',
        b'{"id":"r-0077","parent_id":"r-0000","type":"snapshot","message_ids":["r-0001"], torn}\n',
        _snapshot(78, ["r-0074", "r-0075", "r-0076"]),
        b'{"id":"r-0079","parent_id":"r-0000","type":"message","layer":"agent","ts":1,"digest":"d","role":"u",}\n',
        _snapshot(80, ["r-0079"]),
        {"id": "r-0073", "parent_id": "r-0000", "type": "snapshot", "message_ids": ["r-0005"], "ts": "x"},
    ]
    path = _write(tmp_path / "s", lines)
    child = {"id": "p-0000", "parent_id": "r-0000", "type": "session.join", "layer": "agent", "ts": 5}
    child.update(session_id=SESSION, metadata={"format_version": "1.1"})
    child_message = dict(_message(2), id="p-0002", parent_id="p-0000")
    (tmp_path / "s" / f"{SESSION}.p42.jsonl").write_bytes(
        orjson.dumps(child) + b"\n" + orjson.dumps(child_message) + b"\n"
    )
    snapshots, metadata, _ = _export(path)
    expected = _expected(path)
    # Lines are counted by newline: the four that do not parse count (the reader leaves them out).
    assert [s.pop("events_since_last") for s in snapshots] == [65, 1, 0, 0, 2, 4, 1, 0]
    assert [s.pop("events_since_last") for s in expected] == [65, 1, 0, 0, 2, 1, 0, 0]
    assert snapshots == expected
    assert metadata["total_events"] == _lines(path) == len(list(fmt.iter_files(_files(path), []))) + 4
    shown = {s["description"]: s["agent_messages"] for s in snapshots}
    assert shown["s65"][2] == {"role": "user", "content": "spaced"}
    assert shown["s65"][4] == {"role": "user", "content": "text 62", "id": "fc_1", "type": "function_call"}
    assert shown["s65"][7] == {"role": "late", "content": "text 70"}  # written after its snapshot
    assert shown["s65"][8]["missing"] == "r-9999"
    assert shown["s72"][2]["content"] == "text 2"  # the child file's
    assert [m.get("missing") for m in shown["s78"] + shown["s80"]] == ["r-0074", "r-0075", "r-0076", "r-0079"]


def test_format_1_2_snapshots_by_reference(tmp_path, chunk):
    lines: list[Any] = [_root("1.2", span_attributes={"session.id": SESSION})]
    lines += [_message(i) for i in range(1, 11)]
    lines += [
        _snapshot(11, ["r-0001", "r-0002", "r-0003"], system_prompt="p", cwd="/w"),
        _snapshot(12, {"base": "r-0011", "keep": 2, "add": ["r-0009", "r-0010"]}, prev="r-0011"),
        _snapshot(13, {"base": "r-0012", "keep": 4, "add": []}, prev="r-0012", cwd="/x"),
        _snapshot(14, {"base": "r-0001", "keep": 1, "add": []}, prev="r-0013"),  # a stale base
    ]
    path = _write(tmp_path / "s", lines)
    snapshots, _, _ = _export(path)
    assert snapshots == _expected(path)
    assert [len(s["agent_messages"]) for s in snapshots] == [3, 4, 4, 0]
    assert snapshots[1]["system_prompt"] == "p" and snapshots[2]["cwd"] == "/x"


def test_resume_json_has_the_last_snapshots_messages_wherever_they_are(tmp_path, monkeypatch):
    """Written long before it (beyond the chunks in memory), repeated, after it, torn: resume.json
    shows the last snapshot's messages as the reader does (each id's last message entry)."""
    monkeypatch.setattr(snapshot_scan, "_CHUNK", 4096)
    lines: list[Any] = [
        _root(),
        _message(1),
        _message(2, role="assistant"),
        dict(_message(1), content="again"),
    ]
    lines += [_span(i, content={"tool_result": "y" * 300}) for i in range(4, 200)]
    lines += [_message(200), _snapshot(201, ["r-0001", "r-0200", "r-0002"])]
    lines += [_message(202), _snapshot(203, ["r-0202", "r-0001", "r-0200", "r-0204", "r-9999"])]
    lines += [dict(_message(1), content="last"), _message(204), b'{"id":"r-0001", torn\n']
    path = _write(tmp_path / "s", lines)
    snapshots, _, resume = _export(path)
    expected = _expected(path)
    assert snapshots == expected
    assert resume["messages"] == expected[-1]["agent_messages"]
    assert [m.get("content") for m in resume["messages"]] == [
        "text 202",
        "last",
        "text 200",
        "text 204",
        None,
    ]


@pytest.mark.parametrize("chunk", [999, 301, 64])
def test_lines_longer_than_the_reader_reads_are_counted_never_kept(tmp_path, monkeypatch, chunk):
    """(Chunks are shorter than the longest line read, so only a line over several is too long.)"""
    monkeypatch.setattr(snapshot_scan, "_CHUNK", chunk)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(snapshot_scan, "LONGEST", 1001)
    monkeypatch.setattr(snapshot_spool, "LONGEST", 1001)
    long_message = dict(_message(3), content="z" * 5000)
    lines: list[Any] = [_root(), _message(1), _message(2), long_message]
    lines += [dict(_snapshot(4, ["r-0001", "r-0003"]), pad="p" * 5000), _snapshot(5, ["r-0002", "r-0003"])]
    path = _write(tmp_path / "s", lines)
    snapshots, metadata, _ = _export(path)
    assert metadata["total_events"] == 6  # lines, as before (the reader leaves out the long ones)
    assert [s["description"] for s in snapshots] == ["s5"]
    assert snapshots[0]["agent_messages"] == _expected(path)[0]["agent_messages"]
    assert snapshots[0]["agent_messages"][1]["missing"] == "r-0003"


@pytest.mark.parametrize("last", [b'{"id":"r-0009","parent_id":"r-0000","type":"snap', b"   ", b"{}"])
def test_a_last_line_without_newline(tmp_path, chunk, last):
    lines: list[Any] = [_root(), _message(1), _snapshot(2, ["r-0001"]), last]
    path = _write(tmp_path / "s", lines)
    snapshots, metadata, _ = _export(path)
    assert snapshots == _expected(path)
    assert metadata["total_events"] == 3 + (last == b"{}")


def test_without_a_thread_the_export_reads_and_copies_itself(tmp_path, monkeypatch):
    """At interpreter shutdown no thread can be started: the same ZIP, written by the caller."""

    def refuse(*args: Any) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(snapshot_scan._thread, "start_new_thread", refuse)
    monkeypatch.setattr(snapshot_scan, "_CHUNK", 512)
    lines: list[Any] = [_root(), *(_message(i) for i in range(1, 40)), _snapshot(40, ["r-0001", "r-0039"])]
    path = _write(tmp_path / "s", lines)
    snapshots, metadata, _ = _export(path)
    assert snapshots == _expected(path) and metadata["total_events"] == 41


def test_a_read_error_in_the_copy_thread_fails_the_export_without_a_trace(tmp_path, monkeypatch):
    real = snapshot_scan._file_chunks

    def failing(path: Path, sink: Any) -> Any:
        for n, chunk in enumerate(real(path, sink)):
            if n == 3:
                raise OSError(5, "Input/output error")
            yield chunk

    monkeypatch.setattr(snapshot_scan, "_file_chunks", failing)
    monkeypatch.setattr(snapshot_scan, "_CHUNK", 256)
    lines: list[Any] = [_root(), *(_message(i) for i in range(1, 40)), _snapshot(40, ["r-0001"])]
    path = _write(tmp_path / "s", lines)
    interval = sys.getswitchinterval()
    with pytest.raises(Exception, match="Input/output error"):
        _export(path)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert not zip_container.unfinished()
    assert sys.getswitchinterval() == interval  # (lowered while the thread reads ahead)


def _growing_conversation(directory: Path, turns: int) -> tuple[Path, Path]:
    """A session whose every turn snapshots the whole conversation so far (an agent loop's shape)."""
    s = oat.session("grow", directory=directory, tier="trace", settings=Settings(directory=directory)).start()
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a test."}]
    for turn in range(turns):
        history += [
            {"role": "user", "content": f"question {turn} " + "q" * 200},
            {"role": "assistant", "content": f"answer {turn} " + "a" * 200},
        ]
        oat.snapshot(f"turn {turn}", messages=list(history))
    (path,) = s.files
    (zipped,) = s.stop()
    return path, Path(zipped)


def test_snapshots_json_grows_with_the_session_not_with_snapshots_times_messages(provider, tmp_path):
    """DevDuck's shape repeats every message of every snapshot (60 turns of a growing conversation:
    ~3,700 message copies for 121 messages); by reference, three times the turns is about three
    times the member, and the ZIP still loads with every snapshot's messages whole."""
    sizes = {}
    for turns in (60, 180):
        path, zipped = _growing_conversation(tmp_path / str(turns), turns)
        with zipfile.ZipFile(zipped) as zf:
            sizes[turns] = zf.getinfo(fmt.ZIP_SNAPSHOTS).file_size
        loaded = oat.load_session(zipped).snapshots
        assert loaded == oat.load_session(path).snapshots
        assert [s["agent_messages_count"] for s in loaded] == [3 + 2 * t for t in range(turns)]
        assert [len(s["agent_messages"]) for s in loaded] == [3 + 2 * t for t in range(turns)]
    assert sizes[180] < 3.5 * sizes[60], sizes  # (whole: ~9 times)


def _sliding_window(directory: Path, turns: int, window: int) -> tuple[Path, Path]:
    """A session whose every turn snapshots the system prompt and the latest ``window`` messages
    (a sliding window: the oldest turn dropped as a new one comes); at turn 30 the oldest three
    turns are replaced by a summary, as a summarising conversation manager does."""
    settings = Settings(directory=directory)
    s = oat.session("window", directory=directory, tier="trace", settings=settings).start()
    system = {"role": "system", "content": "You answer from a window."}
    history: list[dict[str, Any]] = []
    for turn in range(turns):
        history += [
            {"role": "user", "content": f"question {turn} " + "q" * 100},
            {"role": "assistant", "content": f"answer {turn} " + "a" * 100},
        ]
        del history[: max(0, len(history) - window)]
        if turn == 30:
            history[:6] = [{"role": "user", "content": "(three turns, summarised)"}]
        oat.snapshot(f"turn {turn}", messages=[system, *history])
    (path,) = s.files
    (zipped,) = s.stop()
    return path, Path(zipped)


def test_a_sliding_windows_snapshots_json_grows_with_what_is_new_not_the_window(provider, tmp_path):
    """A window's snapshots keep runs of the snapshot before (format 3), so five times the window
    writes about the same member (its ids whole: about 4.5 times), and it resolves to the
    snapshots every reader builds from the session's entries."""
    sizes = {}
    for window in (40, 200):
        path, zipped = _sliding_window(tmp_path / str(window), 120, window)
        with zipfile.ZipFile(zipped) as zf:
            sizes[window] = zf.getinfo(fmt.ZIP_SNAPSHOTS).file_size
            members = orjson.loads(zf.read(fmt.ZIP_SNAPSHOTS))
            assert orjson.loads(zf.read(fmt.ZIP_METADATA))["snapshots_format"] == 3
        references = [s["agent_message_ids"] for s in members if type(s["agent_message_ids"]) is dict]
        assert any(type(r["keep"]) is list for r in references)  # (runs: the window moved)
        assert resolved(members, [path]) == _expected(path)
        loaded = oat.load_session(zipped).snapshots
        assert loaded == oat.load_session(path).snapshots
        assert [len(s["agent_messages"]) for s in loaded][-1] == window + 1
    assert sizes[200] < 1.3 * sizes[40], sizes  # (measured 0.9; the ids whole: ~4.5 times)


def test_snapshots_json_is_spooled_not_held_however_many_snapshots(tmp_path, monkeypatch):
    """The export's memory does not grow with the number of snapshots: each view is dumped as it is
    found (the same bytes as the whole list dumped at once), in memory up to a bound, then in a
    temporary file that is never in the directory listing."""
    import tracemalloc

    monkeypatch.setattr(snapshot_spool, "_SPOOLED_IN_MEMORY", 1 << 20)
    monkeypatch.setattr(snapshot_spool, "_SPOOL_BLOCK", 256 << 10)
    views = [
        {"snapshot_id": i, "agent_message_ids": {"keep": i, "add": [f"0a0b0c0d-{i:04d}"]}, "note": "x" * 1200}
        for i in range(4000)
    ]
    expected = orjson.dumps(views, option=orjson.OPT_INDENT_2)
    tracemalloc.start()
    try:
        spool = snapshot_spool.SnapshotSpool(tmp_path)
        for view in views:
            spool.add(view)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(expected) > 4 << 20 and held < 2 << 20  # (the list's JSON is 4 MB and more)
    assert list(tmp_path.iterdir()) == []  # rolled over into a file removed as it was made
    assert spool.count == 4000 and spool.latest == views[-1]
    assert spool.finish() == len(expected)
    out = bytearray()
    spool.copy(out.extend)
    spool.close()
    assert bytes(out) == expected
    empty = snapshot_spool.SnapshotSpool(tmp_path)
    empty.finish()
    out.clear()
    empty.copy(out.extend)
    assert bytes(out) == orjson.dumps([], option=orjson.OPT_INDENT_2)


def test_a_forked_child_closing_its_copy_of_the_spool_writes_nothing_into_it(tmp_path, monkeypatch):
    """A process forked while snapshots.json is being spooled (the copy thread makes it while the
    session runs) closes its copy at once (``zip_ahead``'s at-fork handler): nothing it held in a
    buffer may reach the parent's file."""
    monkeypatch.setattr(snapshot_spool, "_SPOOLED_IN_MEMORY", 1 << 10)
    monkeypatch.setattr(
        snapshot_spool, "_SPOOL_BLOCK", 700
    )  # (a block written, and one pending, at the fork)
    views = [{"snapshot_id": i, "note": "n" * (i % 50)} for i in range(300)]
    spool = snapshot_spool.SnapshotSpool(tmp_path)
    for view in views[:150]:
        spool.add(view)
    pid = os.fork()
    if pid == 0:
        try:
            spool.close()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    for view in views[150:]:
        spool.add(view)
    spool.finish()
    out = bytearray()
    spool.copy(out.extend)
    spool.close()
    assert bytes(out) == orjson.dumps(views, option=orjson.OPT_INDENT_2)
