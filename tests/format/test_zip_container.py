"""The ZIP container's use of zipfile beyond its documented API (``recording/zip_container``):
``ZipInfo.FileHeader(zip64=True)``, ``ZipFile.filelist`` / ``NameToInfo`` and the member's
compression level. Each is checked against this Python's zipfile, so a release that changes one
fails here by name, not in an export at exit."""

from __future__ import annotations

import io
import time
import zipfile
import zlib

from otel_agent_trace.recording import zip_container

STAMP = time.localtime(1_700_000_000)


def test_a_small_member_is_deflated_at_the_fast_level_and_a_big_one_stored():
    small = zip_container.member("a.json", STAMP, 10)
    assert small.compress_type == zipfile.ZIP_DEFLATED
    level = getattr(small, "compress_level", getattr(small, "_compresslevel", None))
    assert level == zip_container.FAST_LEVEL
    big = zip_container.member("b.json", STAMP, zip_container.STORE_ABOVE + 1)
    assert big.compress_type == zipfile.ZIP_STORED
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as zf:
        zf.writestr(small, b"x" * 1000)
    with zipfile.ZipFile(data) as zf:
        info = zf.getinfo("a.json")
        assert info.compress_size < 100 and zf.read("a.json") == b"x" * 1000


def test_a_member_written_by_hand_then_the_rest_by_zipfile_reads_back():
    """As the copy ahead writes ``events.jsonl``: a ZIP64 local header as a placeholder, the data,
    the header again with sizes and CRC-32 (the same length), then zipfile writes the other
    members and a central directory that lists the first."""
    payload = b'{"id": "s-0000"}\n' * 1000
    raw = io.BytesIO()
    placeholder = zip_container.zip64_local_header(zip_container.stored(zipfile.ZipInfo("events.jsonl")))
    raw.write(placeholder)
    raw.write(payload)
    info = zip_container.stored(zip_container.member("events.jsonl", STAMP, len(payload)))
    info.file_size = info.compress_size = len(payload)
    info.CRC = zlib.crc32(payload)
    info.header_offset = 0
    header = zip_container.zip64_local_header(info)
    assert len(header) == len(placeholder)
    raw.seek(0)
    raw.write(header)
    raw.seek(len(header) + len(payload))
    with zip_container.zip_after(raw, info) as zf:
        zf.writestr(zip_container.member("metadata.json", STAMP, 2), b"{}")
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == ["events.jsonl", "metadata.json"]
        assert zf.read("events.jsonl") == payload and zf.read("metadata.json") == b"{}"


def test_a_temporary_file_is_known_before_it_exists_until_finished(tmp_path):
    tmp = zip_container.temporary(tmp_path, "s.zip")
    assert tmp in zip_container.unfinished() and not tmp.exists()
    assert tmp.name.startswith(".s.zip.") and tmp.name.endswith(".tmp")
    tmp.write_bytes(b"partial")
    zip_container.discard_unfinished()
    assert not tmp.exists()
    zip_container.finished(tmp)
    assert tmp not in zip_container.unfinished()
