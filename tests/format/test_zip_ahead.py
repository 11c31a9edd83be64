"""A big session's ZIP, copied while the session runs (``recording.zip_ahead``): the ZIP written at
stop is the file that was being copied (the same inode), holds exactly what an export of the
finished files holds, and wherever the copy cannot be trusted (a line added by hand, the copy
removed) the export copies everything again, with the same result.

The thresholds are lowered (a few KB instead of 32 MB) so a test session is big; the code is the
one that runs."""

from __future__ import annotations

import os
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.recording import archive, snapshot_spool, zip_ahead
from tests.format.zip_sessions import record_session

START = 6 << 10


@pytest.fixture(params=[4 << 20, 4096, 301], ids=lambda n: f"chunk{n}")
def ahead(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Copy ahead from ``START`` bytes on, every 2 KB, ``param`` bytes at a time; snapshots.json
    spooled into a file past 2 KB (forked children inherit it: they must not write into it)."""
    monkeypatch.setattr(snapshot_spool, "_SPOOLED_IN_MEMORY", 2 << 10)
    monkeypatch.setattr(snapshot_spool, "_SPOOL_BLOCK", 1 << 10)
    monkeypatch.setattr(zip_ahead, "START", START)
    monkeypatch.setattr(zip_ahead, "STEP", 2 << 10)
    monkeypatch.setattr(zip_ahead, "_CHUNK", request.param)
    return request.param


def _temporaries(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.zip.*.tmp"))


def _copying(directory: Path, count: int) -> dict[str, int]:
    """Wait until ``count`` ZIPs are being copied into (their temporary files past the header):
    each temporary's name → its inode."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = {p.name: p.stat() for p in _temporaries(directory)}
        if len(found) == count and all(st.st_size > 100 for st in found.values()):
            return {name: st.st_ino for name, st in found.items()}
        time.sleep(0.01)
    raise AssertionError(f"no copy under way in {directory}: {os.listdir(directory)}")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        return {name: zf.read(name) for name in zf.namelist()}


def _same_as_a_fresh_export(recorder: Any, written: list[Path]) -> None:
    """Each ZIP holds what an export of the finished files (the copy not taken) holds: members
    byte for byte (the export time aside), events.jsonl the session's files one after another."""
    for path, tier in zip(written, recorder.tiers, strict=True):
        writer = tier.writer
        files = fmt.child_files(writer.path.parent, recorder.session_id, writer.path, writer.tier)
        ahead = _members(path)
        assert list(ahead) == list(fmt.ZIP_MEMBERS)
        assert ahead[fmt.ZIP_EVENTS] == b"".join(p.read_bytes() for p in files)
        aside = path.with_suffix(".ahead")
        path.rename(aside)
        again = archive.export_zip(recorder, writer)  # the copy is taken: the files are copied
        fresh = _members(again)
        again.unlink()
        aside.rename(path)
        meta, fresh_meta = (orjson.loads(m.pop(fmt.ZIP_METADATA)) for m in (ahead, fresh))
        meta.pop("export_time"), fresh_meta.pop("export_time")
        assert meta == fresh_meta
        assert ahead == fresh


def test_the_zip_is_the_copy_made_while_the_session_ran(tmp_path: Path, ahead: int) -> None:
    seen: dict[str, int] = {}

    def during(s: Any, turn: int) -> None:
        if turn == 25:  # both tiers' files are past START by now
            seen.update(_copying(tmp_path, 2))

    s = record_session(tmp_path, turns=40, during=during)
    recorder = s._recorder
    written = [Path(p) for p in s.stop()]
    assert len(written) == 2
    # The ZIP is the temporary file that was being copied into while the session ran.
    assert sorted(p.stat().st_ino for p in written) == sorted(seen.values())
    assert not _temporaries(tmp_path)
    for path in written:  # the copy is stored (as any member of a session over 32 MB)
        with zipfile.ZipFile(path) as zf:
            assert zf.getinfo(fmt.ZIP_EVENTS).compress_type == zipfile.ZIP_STORED
    _same_as_a_fresh_export(recorder, written)
    zipped = oat.load_session(written[0])
    assert zipped.complete and len(zipped.snapshots) == 40


def test_the_snapshots_are_taken_while_the_session_runs(tmp_path: Path, ahead: int) -> None:
    """snapshots.json is made as the file grows, by the copy thread: at stop only the snapshots
    written since are left to take (a snapshot at every model call would otherwise set the stop's
    pace). The ZIP is the same as an export that takes them all at stop."""
    taken: dict[str, int] = {}

    def during(s: Any, turn: int) -> None:
        if turn == 35:
            _copying(tmp_path, 2)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not taken:
                copies = [zip_ahead._aheads.get(t.writer) for t in s._recorder.tiers]
                views = [c.views if c is not None else None for c in copies]
                if all(v is not None and v.taken >= 25 for v in views):
                    for tier, v in zip(s._recorder.tiers, views, strict=True):
                        taken[tier.writer.tier] = v.taken  # type: ignore[union-attr]
                time.sleep(0.01)

    s = record_session(tmp_path, turns=40, during=during)
    recorder = s._recorder
    written = [Path(p) for p in s.stop()]
    assert set(taken) == {"trace", "checkpoint"}, "the copy thread took no snapshots"
    assert all(n <= 35 for n in taken.values())
    _same_as_a_fresh_export(recorder, written)
    assert len(oat.load_session(written[0]).snapshots) == 40


def test_threads_writing_while_the_copy_runs(tmp_path: Path, ahead: int) -> None:
    @oat.tool
    def work(n: int) -> str:
        return f"result {n} " + "z" * (n % 300)

    with oat.session("threads", directory=tmp_path) as s:
        recorder = s._recorder

        def worker(k: int) -> None:
            with oat.agent(f"worker-{k}"):
                for n in range(150):
                    work(n)
                    if n % 10 == 0:
                        oat.record_message("assistant", f"worker {k} at {n}")

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        seen = _copying(tmp_path, 1)
        for t in threads:
            t.join()
    written = [Path(p) for p in s.zip_paths]
    assert [p.stat().st_ino for p in written] == list(seen.values())
    _same_as_a_fresh_export(recorder, written)
    session = oat.load_session(written[0])
    assert sum(1 for sp in session.spans if sp.name == "execute_tool work") == 600


def test_a_forked_child_leaves_the_parents_copy_alone(tmp_path: Path, ahead: int) -> None:
    @oat.tool
    def work(n: int) -> str:
        return "w" * 400

    with oat.session("fork", directory=tmp_path) as s:
        recorder = s._recorder
        for n in range(40):
            work(n)
        seen = _copying(tmp_path, 1)
        with oat.agent("parent"):
            pid = os.fork()
            if pid == 0:  # the child: a tool call of its own, then gone without atexit
                try:
                    for n in range(30):
                        work(n)
                finally:
                    os._exit(0)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
            assert {p.name: p.stat().st_ino for p in _temporaries(tmp_path)} == seen
            for n in range(40):
                work(n)
    written = [Path(p) for p in s.zip_paths]
    assert [p.stat().st_ino for p in written] == list(seen.values())
    files = fmt.child_files(tmp_path, recorder.session_id, recorder.tiers[0].writer.path, "trace")
    assert len(files) == 2  # the child's file is in the ZIP, after the parent's
    _same_as_a_fresh_export(recorder, written)
    assert sum(1 for sp in oat.load_session(written[0]).spans if sp.name == "execute_tool work") == 110


def test_a_line_added_by_hand_makes_the_export_copy_it_all(tmp_path: Path, ahead: int) -> None:
    def during(s: Any, turn: int) -> None:
        if turn == 20:
            _copying(tmp_path, 2)
            with open(s.files[0], "ab") as f:  # another writer: the copy's offsets are not the file's
                f.write(b'{"id":"by-hand","parent_id":"","type":"note","layer":"agent","ts":1}\n')

    s = record_session(tmp_path, turns=30, during=during)
    recorder = s._recorder
    written = [Path(p) for p in s.stop()]
    assert not _temporaries(tmp_path)
    for path in written:
        with zipfile.ZipFile(path) as zf:
            assert zf.testzip() is None
    trace = recorder.tiers[0].writer.path
    with zipfile.ZipFile(written[0]) as zf:
        assert zf.read(fmt.ZIP_EVENTS) == trace.read_bytes()
    _same_as_a_fresh_export(recorder, written)


def test_the_copy_removed_by_hand_still_gives_the_zip(tmp_path: Path, ahead: int) -> None:
    def during(s: Any, turn: int) -> None:
        if turn == 20:
            _copying(tmp_path, 2)
            for tmp in _temporaries(tmp_path):
                tmp.unlink()

    s = record_session(tmp_path, turns=30, during=during)
    recorder = s._recorder
    written = [Path(p) for p in s.stop()]
    assert len(written) == 2 and not _temporaries(tmp_path)
    _same_as_a_fresh_export(recorder, written)


def test_a_small_session_is_exported_at_stop_as_before(tmp_path: Path) -> None:
    """Below 32 MB no copy is made while the session runs: its members are deflated at stop."""
    s = record_session(tmp_path, turns=10)
    # The copy starts only when a file reaches START (the writer's growth mark): none has, so no
    # copy can have started, however late its thread would be.
    assert all(tier.writer.written < zip_ahead.START for tier in s._recorder.tiers)
    assert not _temporaries(tmp_path)
    written = [Path(p) for p in s.stop()]
    with zipfile.ZipFile(written[0]) as zf:
        assert zf.getinfo(fmt.ZIP_EVENTS).compress_type == zipfile.ZIP_DEFLATED
