"""Reading sessions back is robust: torn and bad lines, broken ZIPs, and never any code execution."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import SessionReadWarning, iter_entries, load_session


@oat.tool
def double(x: int) -> int:
    return 2 * x


@pytest.fixture
def recorded(recording) -> tuple[Path, Path]:
    """A real session (agent → tools, a message, a snapshot): its JSONL file and its ZIP."""
    with oat.agent("reader-test"):
        double(1)
        double(2)
        oat.record_message("assistant", "four")
        oat.snapshot("done", messages=[{"role": "assistant", "content": "four"}])
    jsonl = recording.files[0]
    zips = recording.stop()
    return jsonl, Path(zips[0])


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_torn_last_line_is_skipped_with_a_warning_naming_file_and_line(recorded, tmp_path):
    jsonl, _ = recorded
    lines = _lines(jsonl)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    with pytest.warns(SessionReadWarning, match=rf"{torn}:{len(lines)}: torn last line"):
        session = load_session(torn)
    assert len(session.events) == len(lines) - 1
    assert not session.complete  # the torn line was session.end
    assert all(s.finished for s in session.spans)


def test_a_complete_last_line_without_newline_is_not_torn(recorded, tmp_path):
    jsonl, _ = recorded
    path = tmp_path / "no-newline.jsonl"
    path.write_bytes(jsonl.read_bytes().rstrip(b"\n"))
    session = load_session(path)
    assert session.complete and not session.issues


@pytest.mark.parametrize("bad", [b"{not json\n", b"[1, 2]\n", b'"text"\n'])
def test_a_bad_line_in_the_middle_is_an_error_naming_file_and_line(recorded, tmp_path, bad):
    jsonl, _ = recorded
    lines = _lines(jsonl)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(lines[:3]) + bad + b"".join(lines[3:]))
    with pytest.raises(fmt.SessionFormatError) as info:
        load_session(path, strict=True)
    assert info.value.path == str(path) and info.value.line == 4
    assert str(info.value).startswith(f"{path}:4: ")
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}:4: "):
        list(iter_entries(path))  # a plain read: no issues list to report into


def test_by_default_a_bad_line_is_an_error_and_lenient_skips_it_with_a_warning(recorded, tmp_path):
    jsonl, _ = recorded
    lines = _lines(jsonl)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(lines[:3]) + b"garbage\n" + b"".join(lines[3:]))
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}:4: not JSON"):
        load_session(path)
    with pytest.warns(SessionReadWarning, match=rf"^{path}:4: not JSON"):
        session = load_session(path, lenient=True)
    assert len(session.events) == len(lines)
    assert [(i.path, i.line) for i in session.issues] == [(str(path), 4)]
    issues: list[fmt.ReadIssue] = []
    assert len(list(iter_entries(path, issues))) == len(lines)
    assert [(i.path, i.line) for i in issues] == [(str(path), 4)]


def test_strict_refuses_a_torn_last_line(recorded, tmp_path):
    jsonl, _ = recorded
    data = jsonl.read_bytes()
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(data[: len(data) - 10])
    with pytest.raises(fmt.SessionFormatError, match=rf"^{torn}:\d+: torn last line.*\(strict\)"):
        load_session(torn, strict=True)


def test_empty_file_is_a_clear_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(fmt.SessionFormatError, match="no session entries"):
        load_session(path)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_session(tmp_path / "nope.jsonl")


def test_a_truncated_zip_is_a_clear_error_naming_the_file(recorded, tmp_path):
    _, zip_path = recorded
    data = zip_path.read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(fmt.SessionFormatError, match=rf"^{cut}: .*ZIP"):
        load_session(cut)


def test_a_corrupt_zip_member_is_a_clear_error_naming_the_file(recorded, tmp_path):
    _, zip_path = recorded
    with zipfile.ZipFile(zip_path) as zf:
        info = zf.getinfo(fmt.ZIP_EVENTS)
    data = bytearray(zip_path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 20, start + min(info.compress_size, 200)):
        data[i] ^= 0x5A
    bad = tmp_path / "bad.zip"
    bad.write_bytes(bytes(data))
    with pytest.raises(fmt.SessionFormatError, match=rf"^{bad}(!events.jsonl:\d+)?: .*(ZIP|corrupt)"):
        load_session(bad)


def test_a_zip_without_events_jsonl_is_a_clear_error(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "not a session")
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}: ZIP has no events.jsonl"):
        load_session(path)


class _Trap:
    """Unpickling this creates a file: proof that code from a session file ran."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_session_zip_has_no_pickle_and_the_loader_never_unpickles(recorded, tmp_path):
    _, zip_path = recorded
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
    assert names == list(fmt.ZIP_MEMBERS)
    assert not [n for n in names if n.endswith((".pkl", ".pickle", ".dill"))]

    # A shared ZIP with DevDuck's session.pkl (booby-trapped) and an unknown member.
    marker = tmp_path / "code-ran"
    shared = tmp_path / "shared.zip"
    with zipfile.ZipFile(zip_path) as src, zipfile.ZipFile(shared, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
        dst.writestr("session.pkl", pickle.dumps(_Trap(str(marker))))
        dst.writestr("extra/notes.bin", b"\x00\x01")
    session = load_session(shared)
    assert session.complete and len(session.snapshots) == 1
    assert session.metadata["session_id"] == session.session_id
    assert not marker.exists(), "loading a session ZIP ran code from it"
    pickle.loads(pickle.dumps(_Trap(str(marker))))  # the trap does work when unpickled
    assert marker.exists()


def test_zip_and_jsonl_load_the_same_tree(recorded):
    jsonl, zip_path = recorded
    a, b = load_session(jsonl), load_session(zip_path)
    assert [e.data for e in a.events] == [e.data for e in b.events]
    with zipfile.ZipFile(zip_path) as zf:
        meta = orjson.loads(zf.read(fmt.ZIP_METADATA))
        events = io.BytesIO(zf.read(fmt.ZIP_EVENTS))
    assert meta["total_events"] == len(a.events) == sum(1 for _ in events)
    assert meta["format_version"] == fmt.FORMAT_VERSION
