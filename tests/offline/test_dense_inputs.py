"""Issue 39: lines and ZIP members whose JSON values, not their bytes, would fill memory. Every
reader of each input (built once per module, sized as the issue found them) stays at or under
300 MB peak RSS, measured in a fresh process; a line of more than ``MAX_LINE_VALUES`` values is a
bad line naming its file and line (skipped and counted by the lenient readers)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import SessionReadWarning, iter_entries, load_session
from otel_agent_trace.offline.loader import MAX_ENTRIES
from otel_agent_trace.session_format.reader import MAX_LINE_VALUES, count_values

from . import hostile

MEMORY_LIMIT_MB = 300
DENSE = ("dense_span_end", "dense_unfinished_starts", "dense_snapshots_zip")


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Path]:
    return hostile.build_dense(tmp_path_factory.mktemp("dense"))


@pytest.mark.parametrize("name", DENSE)
def test_every_reader_of_a_dense_input_stays_bounded(cases, name, tmp_path):
    """1.0 GB (one line), 2.5 GB (three) and 1.9 GB (the ZIP member) before: now each is refused
    before it is parsed."""
    path = cases[name]
    peaks = {}
    for reader in hostile.READERS:
        out = hostile.peak_rss(reader, path, tmp_path / "work")
        peaks[reader] = out["max_rss_mb"]
        if reader in ("load_session", "iter_entries") and name != "dense_snapshots_zip":
            line = 3 if name == "dense_span_end" else 2
            assert out["result"].startswith(f"SessionFormatError: {path}:{line}: a line of about "), out
            assert f"JSON values, more than the {MAX_LINE_VALUES} read" in out["result"], out
    assert max(peaks.values()) <= MEMORY_LIMIT_MB, peaks


def test_a_dense_snapshots_member_gives_way_to_the_events(cases):
    with pytest.warns(
        SessionReadWarning, match=r"dense-snap\.zip!snapshots\.json: about \d+ JSON values.*snapshots built"
    ):
        session = load_session(cases["dense_snapshots_zip"])
    assert len(session.events) == 1 and session.snapshots == []


def test_lenient_readers_skip_a_dense_line_and_count_it(cases):
    path = cases["dense_unfinished_starts"]
    issues: list[fmt.ReadIssue] = []
    assert len(list(iter_entries(path, issues))) == 1
    assert [i.line for i in issues] == [2, 3, 4]
    with pytest.warns(SessionReadWarning, match=r"dense-starts\.jsonl:4: a line of about"):
        assert len(load_session(path, lenient=True).events) == 1


def test_text_full_of_commas_is_one_value(tmp_path):
    """The cheap count (every ``,``, ``[``, ``{``) is only a first bound: strings are left out
    before a line is refused, so a long text (or key) of commas and brackets reads as it is."""
    text = ",[{" * MAX_LINE_VALUES + '\\",[' * 1000
    message = hostile.entry(1, "message", role="tool", content=text, tool_calls=[{"a": [1, 2]}] * 1000)
    path = hostile.jsonl(tmp_path / "commas.jsonl", hostile.ROOT, message)
    data = path.read_bytes()
    assert data.count(b",") + data.count(b"[") + data.count(b"{") > 3 * MAX_LINE_VALUES
    session = load_session(path)
    assert session.events[1].data["content"] == text
    assert count_values(data) < 10_000


def test_a_line_just_under_the_bound_is_read(tmp_path):
    values = [0] * (MAX_LINE_VALUES - 100)
    path = hostile.jsonl(tmp_path / "many.jsonl", hostile.ROOT, hostile.entry(1, "message", content=values))
    assert load_session(path).events[1].data["content"] == values
    over = hostile.jsonl(
        tmp_path / "over.jsonl", hostile.ROOT, hostile.entry(1, "message", content=values * 2)
    )
    with pytest.raises(fmt.SessionFormatError, match=r"over\.jsonl:2: a line of about \d+ JSON values"):
        load_session(over)


def test_a_dense_metadata_member_is_refused_naming_it(tmp_path):
    root = json.dumps(hostile.ROOT).encode() + b"\n"
    meta = b'{"a": ' + b"[" * 10 + b"0," * MAX_LINE_VALUES + b"0" + b"]" * 10 + b"}"
    path = hostile.our_zip(
        tmp_path / "meta.zip", root, compression=zipfile.ZIP_STORED, **{"metadata.json": meta}
    )
    with pytest.raises(fmt.SessionFormatError, match=r"meta\.zip!metadata\.json: about \d+ JSON values"):
        load_session(path)


def test_every_reader_of_a_million_unfinished_spans_stays_bounded(cases, tmp_path):
    """1 M span starts never ended (231 MB): analyze, report, diff and view took 1.0 GB keeping
    every open span's start entry, load_session 863 MB and replay 1.5 GB holding them all. The
    streaming readers now keep a few small records per running span; the whole-session readers
    refuse a file of more than MAX_ENTRIES entries before it fills memory."""
    path = cases["million_unfinished"]
    peaks = {}
    for reader in hostile.READERS:
        if reader == "export otlp-json":
            continue  # measured on the same input by tests/export/test_export_memory.py
        out = hostile.peak_rss(reader, path, tmp_path / "work")
        peaks[reader] = out["max_rss_mb"]
        if reader in ("load_session", "replay", "fork"):
            assert f"more than {MAX_ENTRIES:,} entries, too many to load whole" in str(out["result"]), out
        elif reader == "iter_entries":
            assert out["result"] == "read 1000001 entries", out
    assert max(peaks.values()) <= MEMORY_LIMIT_MB, peaks


def test_a_session_past_max_entries_is_refused_unless_asked(tmp_path):
    messages = (hostile.entry(seq, "message", role="user") for seq in range(1, 30))
    path = hostile.jsonl(tmp_path / "s.jsonl", hostile.ROOT, *messages)
    too_many = r"s\.jsonl: more than 10 entries, too many to load whole"
    with pytest.raises(fmt.SessionFormatError, match=too_many):
        load_session(path, max_entries=10)
    assert len(load_session(path, max_entries=None).events) == 30
    assert len(load_session(path, max_entries=30).events) == 30
    refused = main_cli(["fork", "--at", "abcd0000-0003", "--max-entries", "10", str(path)])
    assert refused[0] == 2 and "more than 10 entries" in refused[1]
    forked = main_cli(["fork", "--at", "abcd0000-0003", "--max-entries", "0", "--json", str(path)])
    assert forked[0] == 0, forked


def main_cli(argv: list[str]) -> tuple[int, str]:
    """The CLI run in a subprocess: (exit code, stdout and stderr)."""
    command = [sys.executable, "-m", "otel_agent_trace.cli.main", *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr
