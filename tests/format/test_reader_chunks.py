"""The reader reads a file a chunk (64 KiB) at a time and numbers lines only when it must: lines
across chunk boundaries, lines longer than several chunks, blank lines and bad lines far into a
file keep their text and their numbers; a 1.2 file is upgraded whatever chunk its lines fall in."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import iter_lines, open_regular

CHUNK = 1 << 16


def _expected(data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """What a reader must give: every non-blank line parsed, numbered from 1."""
    return [(n, orjson.loads(line)) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def _read(path: Path, **kwargs: Any) -> list[tuple[int, dict[str, Any]]]:
    with open_regular(path) as stream:
        return list(iter_lines(stream, str(path), **kwargs))


def _line(rng: random.Random, n: int, size: int) -> bytes:
    return orjson.dumps({"id": f"e-{n}", "parent_id": "", "type": "message", "ts": n, "pad": "x" * size})


def test_lines_of_every_size_across_chunk_boundaries(tmp_path: Path):
    rng = random.Random(3)
    sizes = [rng.choice([10, 300, 5_000, 40_000, 70_000, 200_000]) for _ in range(300)]
    data = b"\n".join(_line(rng, n, size) for n, size in enumerate(sizes)) + b"\n"
    assert len(data) > 50 * CHUNK
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    got = _read(path)
    assert got == _expected(data)
    assert [e["pad"] for e in fmt.iter_entries(path)] == [e["pad"] for _, e in got]


def test_blank_lines_sparse_and_in_long_runs_keep_the_numbers(tmp_path: Path):
    rng = random.Random(5)
    parts = []
    for n in range(2_000):
        parts.append(_line(rng, n, rng.randrange(0, 900)))
        choice = rng.random()
        if choice < 0.1:
            parts.append(b"")  # one blank line
        elif choice < 0.11:
            parts.append(b"\n" * rng.randrange(1_000, 300_000))  # a long run, over chunks
        elif choice < 0.13:
            parts.append(b"  \r")  # a line of white space
    data = b"\n".join(parts)  # the last line without a newline (it parses: not torn)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    issues: list[fmt.ReadIssue] = []
    assert _read(path, issues=issues) == _expected(data)
    assert issues == []


def test_a_line_over_the_cap_is_dropped_as_read_and_named_by_its_number(tmp_path: Path):
    rng = random.Random(7)
    lines = [_line(rng, n, 1_000) for n in range(400)]
    lines[150] = _line(rng, 150, 5 * CHUNK)  # over the cap, and over several chunks
    lines[151] = _line(rng, 151, 90_000)  # under it, across a boundary
    over = list(range(200, 400, 10))  # just over the cap, begun in one chunk and ended in the next
    for n in over:
        lines[n] = _line(rng, n, 100_000 + n)
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    cap = 100_000
    issues: list[fmt.ReadIssue] = []
    got = _read(path, issues=issues, max_line=cap)
    assert [str(i) for i in issues] == [f"{path}:{n + 1}: line longer than {cap} bytes" for n in [150, *over]]
    assert got == [(n, e) for n, e in _expected(data) if n - 1 not in [150, *over]]
    with pytest.raises(fmt.SessionFormatError) as raised:
        _read(path, max_line=cap)
    assert f"{path}:151" in str(raised.value)


def test_bad_lines_far_into_a_file_are_named_by_file_and_line(tmp_path: Path):
    rng = random.Random(11)
    lines = [_line(rng, n, rng.randrange(100, 3_000)) for n in range(3_000)]
    bad = sorted(rng.sample(range(1, 2_999), 5))
    for n in bad:
        lines[n] = b'{"id": "cut'
    lines.insert(1_000, b"")  # a blank line shifts every number after it
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    numbers = [n + 1 + (n >= 1_000) for n in bad]
    with pytest.raises(fmt.SessionFormatError) as raised:
        list(fmt.iter_entries(path))
    assert str(raised.value).startswith(f"{path}:{numbers[0]}: not JSON")
    issues: list[fmt.ReadIssue] = []
    entries = list(fmt.iter_entries(path, issues))
    assert [i.line for i in issues] == numbers
    assert len(entries) == 3_000 - len(bad)
    with pytest.raises(fmt.SessionFormatError):
        list(fmt.iter_entries(path, issues, strict=True))


def test_a_byte_order_mark_and_a_torn_last_line_across_a_boundary(tmp_path: Path):
    rng = random.Random(13)
    body = b"\n".join(_line(rng, n, 700) for n in range(300)) + b"\n"
    torn = b'{"id": "e-300", "type": "message", "pad": "' + b"y" * CHUNK  # no end, no newline
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + body + torn)
    issues: list[fmt.ReadIssue] = []
    assert _read(path, issues=issues) == _expected(body)
    assert [(i.line, i.reason.split(" (")[0]) for i in issues] == [(301, "torn last line")]
    assert len(list(fmt.iter_entries(path))) == 300  # torn: a warning, not an error, even strict


def test_a_format_1_2_file_is_upgraded_whatever_chunk_its_lines_fall_in(tmp_path: Path):
    root = {
        "id": "s-0000",
        "parent_id": "",
        "type": "session.start",
        "ts": 1,
        "session_id": "S",
        "span_attributes": {"session.id": "S"},
        "metadata": {"format": "otel-agent-trace/session", "format_version": "1.2"},
    }
    start = {"id": "s-0001", "parent_id": "s-0000", "type": "span.start", "ts": 1, "name": "invoke_agent a"}
    start |= {"trace_id": "t" * 32, "span_id": "a" * 16, "attributes": {}}
    lines = [orjson.dumps(root), orjson.dumps(start)]
    for n in range(2, 400):  # messages under the open span: each leaves out its span_id
        message = {"id": f"s-{n:04d}", "parent_id": "s-0001", "type": "message", "ts": n, "p": "m" * 900}
        lines.append(orjson.dumps(message))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    entries = list(fmt.iter_entries(path))
    assert len(entries) == 400
    assert entries[1]["attributes"] == {"session.id": "S"} and entries[1]["parent_span_id"] is None
    assert all(e["span_id"] == "a" * 16 for e in entries[2:])
    numbered = _read(path)
    assert [n for n, _ in numbered] == list(range(1, 401)) and [e for _, e in numbered] == entries


def test_many_lines_of_white_space_are_skipped_and_later_lines_keep_their_numbers(tmp_path: Path):
    rng = random.Random(17)
    lines = []
    for n in range(3_000):
        lines.append(_line(rng, n, rng.randrange(10, 200)))
        lines.extend([b"   \r", b"\t "][: rng.randrange(0, 3)])  # each a failed parse, at first
    lines.insert(len(lines) - 5, b'{"id": "cut')
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    issues: list[fmt.ReadIssue] = []
    got = _read(path, issues=issues)
    assert [i.line for i in issues] == [len(lines) - 5]
    assert got == [
        (n, orjson.loads(line)) for n, line in enumerate(lines, 1) if n != len(lines) - 5 and line.strip()
    ]
