"""The session file on a disk that fills up and then frees space again (issue 39), on a real
full filesystem: a small tmpfs mounted by the test (root only).

A write that fails half-way leaves a torn line; the format promises that a torn line can only be
a file's last. So after a failed write the file must hold every entry written before it, whole,
and nothing after it, and the user is told once."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from otel_agent_trace.recording import stop_active, zip_ahead
from otel_agent_trace.recording.writer import START, SpanLine
from otel_agent_trace.settings import Settings


@pytest.fixture
def small_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A tmpfs of 2 MB (or the size the test gives, ``indirect``), mounted for the test and
    unmounted after it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs (a real full disk) needs root")
    size = getattr(request, "param", "2m")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"root, yet mounting a tmpfs failed: {done.stderr.strip()}"
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def _fill(path: Path) -> None:
    """Fill the filesystem of ``path`` with ``path`` until a write of one byte fails."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for size in (1 << 20, 64 << 10, 4 << 10, 1):
            chunk = b"\0" * size
            while True:
                try:
                    if os.write(fd, chunk) < size:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    finally:
        os.close(fd)
    probe = path.with_name("probe")
    with pytest.raises(OSError) as raised:
        probe.write_bytes(b"x" * 8192)
    probe.unlink()
    assert raised.value.errno == errno.ENOSPC


@oat.tool
def look_up(query: str) -> str:
    """Look something up."""
    return query.upper()


def _lost_warnings(caplog: pytest.LogCaptureFixture, path: Path) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("otel_agent_trace")
        and r.levelno >= logging.WARNING
        and path.name in r.getMessage()
    ]


def _off_page_ends(files: list[Path], call: Any) -> None:
    """Make each file end inside a page (the part of it not yet written is its room on the full
    disk: a line longer than that is written in part, torn, then the write fails)."""
    block = os.statvfs(files[0].parent).f_bsize
    for _ in range(10):
        if all(path.stat().st_size % block for path in files):
            return
        call()
    raise AssertionError("the files keep ending at a page's end")


def _check_file(path: Path, before: bytes) -> bytes:
    """The file holds what it held before the disk filled, whole lines only, and loads strictly."""
    data = path.read_bytes()
    assert data.startswith(before), f"{path.name}: an entry written before the disk filled is gone"
    assert data.endswith(b"\n"), f"{path.name}: ends with a torn line"
    for number, line in enumerate(data.splitlines(), 1):
        assert isinstance(orjson.loads(line), dict), f"{path.name}:{number}"  # no torn line anywhere
    loaded = load_session(path, strict=True, children=False)
    assert [e.id for e in loaded.events][: before.count(b"\n")] == [
        orjson.loads(line)["id"] for line in before.splitlines()
    ]
    return data


def test_a_full_disk_leaves_files_that_load_with_everything_written_before(
    provider, small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="otel_agent_trace")
    settings = Settings(directory=small_disk)
    s = oat.session("full-disk", directory=small_disk, tier="both", settings=settings).start()
    try:
        files = s.files
        trace_file, checkpoint_file = sorted(files, key=lambda path: fmt.CHECKPOINT_SUFFIX in path.name)
        with oat.agent("looper"):
            for i in range(5):
                assert look_up(f"before {i}") == f"BEFORE {i}"
            s.flush()
            _off_page_ends(files, lambda: look_up("one more"))
            befores = {path: path.read_bytes() for path in files}
            _fill(small_disk / "filler")
            # Each line too long for the room left: torn in the checkpoint tier (whole arguments),
            # maybe in the trace tier (arguments cut short), then a write fails.
            for i in range(3):
                assert look_up(f"full {i} " + "x" * 20_000) == f"FULL {i} " + "X" * 20_000
            (small_disk / "filler").unlink()  # the space is back
            for i in range(5):
                assert look_up(f"after {i}") == f"AFTER {i}"
            oat.record_message("user", "after the disk was full")
        zips = s.stop()
    finally:
        s.stop()
        stop_active()

    datas = [_check_file(path, befores[path]) for path in files]
    assert len(load_session(trace_file, strict=True).spans) >= 6  # the agent and five calls before
    # Told once a file, naming it (never an exception in the agent's code).
    (warning,) = _lost_warnings(caplog, checkpoint_file)
    assert "No space left on device" in warning
    assert len(_lost_warnings(caplog, trace_file)) <= 1
    # The ZIPs, written at exit once there is room again, hold the same sessions.
    assert len(zips) == 2
    for zip_path in zips:
        with zipfile.ZipFile(zip_path) as zf:
            assert zf.testzip() is None
            data = zf.read(fmt.ZIP_EVENTS)
        assert data in datas
        path = files[datas.index(data)]
        assert load_session(zip_path, strict=True).events == load_session(path, strict=True).events
    assert not list(small_disk.glob(".*.tmp"))


@oat.tool
def work(step: int, text: str) -> int:
    return len(text) + step


@pytest.mark.parametrize("small_disk", ["80m"], indirect=True)
def test_a_full_disk_while_the_zip_is_copied_ahead(
    provider, small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A session past 32 MB has its ZIP copied while it runs (recording.zip_ahead): the disk
    fills, a line is torn and cut off, space comes back; the ZIP written at stop is the file."""
    caplog.set_level(logging.WARNING, logger="otel_agent_trace")
    settings = Settings(directory=small_disk)
    s = oat.session("big", directory=small_disk, tier="checkpoint", settings=settings).start()
    try:
        (path,) = s.files
        with oat.agent("big"):
            step = 0
            while path.stat().st_size <= zip_ahead.START:  # the copy starts (once, till 8 MB more)
                step += 1
                work(step, f"{step} " + "lorem ipsum dolor sit amet " * 700)
            s.flush()
            _off_page_ends([path], lambda: work(0, "one more"))
            before = path.read_bytes()
            # The copy catches up first (its header before the file's bytes); else its failure on
            # the full disk would free the room.
            deadline = time.monotonic() + 120
            while not [c for c in small_disk.glob(".*.zip.*.tmp") if c.stat().st_size > len(before)]:
                assert time.monotonic() < deadline, f"the ZIP is not copied ahead: {os.listdir(small_disk)}"
                time.sleep(0.02)
            _fill(small_disk / "filler")
            for i in range(3):
                work(-i, "full " + "lorem ipsum dolor sit amet " * 700)
            (small_disk / "filler").unlink()
            for i in range(3):
                work(i, "after")
        zips = s.stop()
    finally:
        s.stop()
        stop_active()
    assert len(_lost_warnings(caplog, path)) == 1
    data = _check_file(path, before)
    with zipfile.ZipFile(zips[0]) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)
        assert zf.read(fmt.ZIP_EVENTS) == data
    assert not list(small_disk.glob(".*.tmp"))


def test_a_disk_still_full_at_stop_leaves_no_zip_and_files_that_load(
    provider, small_disk: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:

    caplog.set_level(logging.WARNING, logger="otel_agent_trace")
    settings = Settings(directory=small_disk)
    s = oat.session("still-full", directory=small_disk, tier="both", settings=settings).start()
    try:
        files = s.files
        with oat.agent("looper"):
            for i in range(5):
                look_up(f"before {i}")
            s.flush()
            _off_page_ends(files, lambda: look_up("one more"))
            befores = {path: path.read_bytes() for path in files}
            _fill(small_disk / "filler")
            for i in range(3):
                look_up(f"full {i} " + "x" * 20_000)
        zips = s.stop()  # the export's failure is a warning, not an internal error of ours
    finally:
        s.stop()
        stop_active()
    assert zips == []
    assert sorted(small_disk.iterdir()) == sorted([*files, small_disk / "filler"])  # no garbage
    for path in files:
        _check_file(path, befores[path])
    (checkpoint_file,) = [path for path in files if fmt.CHECKPOINT_SUFFIX in path.name]
    assert checkpoint_file.read_bytes() == befores[checkpoint_file]
    said = _lost_warnings(caplog, checkpoint_file)
    assert len([m for m in said if "ZIP" not in m]) == 1  # the writes lost, once
    assert len([m for m in said if "session ZIP" in m and "No space left" in m]) == 1  # no ZIP, said


def test_a_batch_cut_short_keeps_its_whole_lines_and_the_file_takes_no_more(small_disk: Path) -> None:
    """Several lines written in one call, the disk full in the middle of the second: the first is
    kept (counted), the torn one cut off; later entries are not written, even with room again."""
    from otel_agent_trace.recording.writer import TierWriter

    path = small_disk / "s.jsonl"
    writer = TierWriter(path, "trace", "abcd1234", root={"type": "session.start"})
    block = os.statvfs(small_disk).f_bsize
    base = (
        len(orjson.dumps({"id": "abcd1234-0001", "parent_id": "abcd1234-0000", "type": "pad", "p": ""})) + 1
    )
    pad = (block - 1000 - path.stat().st_size - base) % block  # 1,000 bytes left in its last page
    assert writer.write(writer.root_id, {"type": "pad", "p": "a" * pad}) == "abcd1234-0001"
    assert path.stat().st_size % block == block - 1000
    before = path.read_bytes()
    _fill(small_disk / "filler")

    def start(span_id: int, size: int) -> SpanLine:
        entry = {"id": None, "parent_id": None, "type": "span.start", "trace_id": "t", "p": "b" * size}
        return SpanLine(entry, span_id, START, None)

    assert writer.write_spans([start(1, 200), start(2, 5000), start(3, 10)]) is False
    (small_disk / "filler").unlink()
    assert writer.write("abcd1234-0002", {"type": "after"}) is None
    writer.close()
    data = path.read_bytes()
    lines = data.splitlines()
    assert data.startswith(before) and data.endswith(b"\n") and len(lines) == 3
    assert orjson.loads(lines[-1])["id"] == "abcd1234-0002"
    assert writer.failed and writer.entries == 3 and writer.written == len(data)


def test_a_file_that_cannot_take_its_root_line_is_not_left_behind(small_disk: Path) -> None:
    from otel_agent_trace.recording.writer import TierWriter

    _fill(small_disk / "filler")
    descriptors = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError) as raised:
        TierWriter(
            small_disk / "s.jsonl", "trace", "abcd1234", root={"type": "session.start", "p": "x" * 8192}
        )
    assert raised.value.errno == errno.ENOSPC
    assert os.listdir(small_disk) == ["filler"]
    assert len(os.listdir("/proc/self/fd")) == descriptors


def test_a_session_started_on_a_full_disk_lets_the_agent_run(small_disk: Path, caplog) -> None:
    """``oat.session(...)`` where no file can be made: one warning, no file, the agent's code
    runs and returns as without us."""
    _fill(small_disk / "filler")
    caplog.set_level(logging.WARNING, logger="otel_agent_trace")
    with oat.session("full", directory=small_disk, tier="both") as s, oat.agent("looper"):
        assert look_up("still works") == look_up("still works")
    assert s.files == [] and s.session_id is None
    assert os.listdir(small_disk) == ["filler"]
    said = [r.getMessage() for r in caplog.records if "was not recorded" in r.getMessage()]
    assert len(said) == 1 and "No space left" in said[0]
