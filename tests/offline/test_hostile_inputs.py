"""Hostile and broken files: each is refused with a SessionFormatError naming the file (and the
line, for a line), without hanging, and in bounded memory (≤ 300 MB peak, measured)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import SessionReadWarning, iter_entries, load_session

from . import hostile

MEMORY_LIMIT_MB = 300

# name → what the error says (after "<file>[:<line>]: ")
EXPECTED = {
    "events_bomb_no_newline": r"bomb\.zip!events\.jsonl: inflates .* ZIP bomb",
    "metadata_bomb": r"meta-bomb\.zip!metadata\.json: (inflates|member of \d+ bytes, more than)",
    # Loads: its snapshots are built from events.jsonl instead (nothing lost), with a warning.
    "snapshots_bomb": r"snap-bomb\.zip!snapshots\.json: (inflates|member of \d+ bytes).*; snapshots built",
    "lying_compressed_size": r"lying\.zip!events\.jsonl: declares \d+ compressed bytes, more than the file",
    "newlines_zip": r"newlines\.zip!events\.jsonl: inflates",
    "long_line_stored_zip": r"long\.zip!events\.jsonl:1: line longer than",
    "long_line_jsonl": r"long\.jsonl:2: line longer than",
    "metadata_over_cap": r"bigmeta\.zip!metadata\.json: member of \d+ bytes, more than",
    "dev_zero_jsonl": r"zero\.jsonl: a character device, not a session file",
    "dev_zero_zip": r"zero\.zip: a character device, not a session file",
    "fifo": r"fifo\.jsonl: a FIFO, not a session file",
    "directory": r"dir\.jsonl: a directory with no session file",
    "unreadable": r"mem\.jsonl(:1)?: (read failed|cannot read)",
    "encrypted_zip": r"enc\.zip!events\.jsonl: encrypted",
    "unknown_compression": r"ppmd\.zip!events\.jsonl: unsupported compression method 98",
    "two_events_members": r"two\.zip: ZIP has 2 members named events\.jsonl",
    "no_events_member": r"noevents\.zip: ZIP has no events\.jsonl",
    "snapshots_42": r"snap42\.zip!snapshots\.json: not a list",
    "metadata_list_zip": r"metalist\.zip!metadata\.json: a JSON list, not an object",
    "newer_version_zip": r"v9\.zip!metadata\.json: format version 9\.0 is newer",
    "wrong_encoding": r"latin1\.jsonl:2: not UTF-8",
    "utf16": r"utf16\.jsonl:1: not (JSON|UTF-8)",
    "newer_version": r"v2\.jsonl:1: format version 2\.0 is newer",
    "ts_nan": r"nan\.jsonl:2: 'ts' is 'NaN', not a number",
    "span_without_span_id": r"nospan\.jsonl:2: no 'span_id'",
    "span_id_list": r"spanlist\.jsonl:2: 'span_id' is list, not a string",
    "metadata_list": r"metalist\.jsonl:1: 'metadata' is list, not an object",
    "message_ids_int": r"msgids\.jsonl:2: 'message_ids' is int, not a list of ids",
    "status_list": r"status\.jsonl:2: 'status' is list, not an object",
    "corrupt_line": r"corrupt\.jsonl:2: not JSON",
    "empty": r"empty\.jsonl: no session entries",
    "blank": r"blank\.jsonl: no session entries",
    "empty_directory": r"emptydir: a directory with no session file",
}

# Loaded all the same, with a warning naming the member left aside (instead of an error).
WARNED = {"snapshots_bomb"}

# Streaming reads only events.jsonl, and an empty stream is no error: these refuse a whole load only.
LOAD_ONLY = {
    "metadata_bomb",
    "snapshots_bomb",
    "metadata_over_cap",
    "snapshots_42",
    "metadata_list_zip",
    "newer_version_zip",
    "empty",
    "blank",
}

_WORKER = """
import json, sys, warnings
from otel_agent_trace.offline import iter_entries, load_session
out = {}
for name, path in json.loads(sys.argv[1]).items():
    results = []
    for read in (lambda: load_session(path), lambda: sum(1 for _ in iter_entries(path))):
        try:
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                read()
            told = [str(w.message) for w in warned if "snapshots built" in str(w.message)]
            results.append(f"loaded, warned: {told[0]}" if told else "loaded")
        except Exception as exc:
            results.append(f"{type(exc).__name__}: {exc}")
    out[name] = results
print(json.dumps(out))
"""

_PROBE = hostile.PROBE  # the launcher that reads a worker's own peak RSS


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Path]:
    return hostile.build(tmp_path_factory.mktemp("hostile"))


def test_every_case_is_listed(cases):
    assert set(cases) == set(EXPECTED)


def test_hostile_files_are_refused_naming_file_and_line_in_bounded_memory(cases):
    """One subprocess reads every case (whole and streamed) and reports its peak RSS: a FIFO or
    ``/dev/zero`` would hang or fill memory here, a bomb or an over-long line would be read whole."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, _WORKER, json.dumps({k: str(v) for k, v in cases.items()})],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    wrong = []
    for name, pattern in EXPECTED.items():
        loaded, streamed = out[name]
        if name in LOAD_ONLY and streamed == "loaded":
            streamed = loaded
        for result in (loaded, streamed):
            refused = "loaded, warned: " if name in WARNED else "SessionFormatError: "
            message = result.removeprefix(refused)
            if (
                not result.startswith(refused)
                or not message.startswith(str(cases[name].parent))
                or not re.search(pattern, message)
            ):
                wrong.append((name, result))
    assert wrong == [], "\n".join(map(str, wrong))
    assert out["max_rss_mb"] <= MEMORY_LIMIT_MB, out["max_rss_mb"]


def test_a_blank_line_run_costs_little_and_lines_are_still_numbered(tmp_path):
    path = tmp_path / "blanks.jsonl"
    path.write_bytes(
        json.dumps(hostile.ROOT).encode() + b"\n" + b"\n" * 5_000_000 + b"  \r\n\t\n" + b"{bad\n" + b"\n"
    )
    with pytest.raises(fmt.SessionFormatError, match=rf"^{path}:5000004: not JSON"):
        load_session(path)
    with pytest.warns(SessionReadWarning, match=r":5000004: not JSON"):
        assert len(load_session(path, lenient=True).events) == 1


def test_a_lenient_load_skips_the_bad_lines_and_counts_them(tmp_path):
    path = hostile.jsonl(
        tmp_path / "mixed.jsonl",
        hostile.ROOT,
        hostile.entry(1, ts="NaN"),
        hostile.entry(2),
        hostile.entry(3, "span.end", span_id=[1]),
        hostile.entry(4, "span.end", span_id=f"{2:016x}", duration_ns=1),
    )
    with pytest.warns(SessionReadWarning):
        session = load_session(path, lenient=True)
    assert [i.line for i in session.issues] == [2, 4]
    assert [e.id for e in session.events] == ["abcd0000-0000", "abcd0000-0002", "abcd0000-0004"]
    (span,) = session.spans
    assert span.finished and span.duration_ns == 2
    issues: list[fmt.ReadIssue] = []
    assert len(list(iter_entries(path, issues))) == 3 and len(issues) == 2


def test_duplicate_ids_cycles_and_dangling_parents_load_with_a_warning(tmp_path):
    path = hostile.jsonl(
        tmp_path / "tree.jsonl",
        hostile.ROOT,
        hostile.entry(1, "message"),
        hostile.entry(1, "message", role="again"),  # duplicate id
        hostile.entry(2, "message", parent_id="abcd0000-9999"),  # dangling
        hostile.entry(3, "message", parent_id="abcd0000-0004"),  # 3 -> 4 -> 3
        hostile.entry(4, "message", parent_id="abcd0000-0003"),
    )
    with pytest.warns(SessionReadWarning) as warned:
        session = load_session(path)
    reasons = " | ".join(str(w.message) for w in warned)
    assert "1 duplicate entry ids (the first is used): abcd0000-0001" in reasons
    assert "1 entries whose parent is not in the session: abcd0000-0002" in reasons
    assert "2 entries in a parent cycle" in reasons
    assert len(session.issues) == 3
    assert session.entry("abcd0000-0001").data.get("role") is None  # the first one
    assert [e.id for e in session.ancestors("abcd0000-0003")] == ["abcd0000-0004"]  # stops at the cycle
    with pytest.raises(fmt.SessionFormatError, match="duplicate entry ids.*strict"):
        load_session(path, strict=True)


def test_a_fifo_given_to_any_command_is_refused_without_blocking(tmp_path):
    """Every command that reads a session given by the user checks the file's type before it
    opens it: a FIFO (nobody writing) would block an ``open()`` forever."""
    from tests.cli.helpers import cli

    fifo = tmp_path / "session-20261129-084903-abcd0000.jsonl"
    os.mkfifo(fifo)
    good = hostile.jsonl(tmp_path / "good.jsonl", hostile.ROOT)
    out = tmp_path / "out"
    commands = [
        ["export", "--format", "otlp-json", str(out / "a.json"), str(fifo)],
        ["export", "--format", "jaeger-json", "-", str(fifo)],
        ["view", str(fifo)],
        ["view", "--html", str(out / "v.html"), str(fifo)],
        ["analyze", str(fifo)],
        ["report", str(fifo)],
        ["diff", str(good), str(fifo)],
    ]
    out.mkdir()
    for argv in commands:
        done = cli(*argv, timeout=30)
        assert done.returncode == 2, (argv, done.stderr)
        assert str(fifo) in done.stderr and "Traceback" not in done.stderr, (argv, done.stderr)
    # A directory scan takes regular files only (as analyze-dir does): the FIFO is passed over
    # unopened, and the one session beside it (a root and no span: nothing to export) is reported.
    done = cli("export-dir", "--format", "otlp-json", str(out), str(tmp_path), timeout=30)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{good}: no spans in this session" in done.stderr and "0 of 1 sessions" in done.stdout
    assert str(fifo) not in done.stderr and sorted(out.iterdir()) == []
    with pytest.raises(fmt.SessionFormatError, match="a FIFO"):
        load_session(fifo)


def test_values_in_read_warnings_reach_no_terminal_raw(tmp_path):
    """Ids from a file (a duplicate, a dangling parent) told in a SessionReadWarning by
    ``replay``, ``fork`` and ``resume`` (and by ``load_session`` to any caller) are escaped where
    the warning is built: ESC[2J and ESC]0;…BEL never leave raw, on any stream."""
    from tests.cli.helpers import RAW_CONTROLS, cli

    evil = "abcd0000-\x1b[2J\x1b]0;owned\x07\x9b"
    path = hostile.jsonl(
        tmp_path / "evil.jsonl",
        hostile.ROOT,
        hostile.entry(1, "message", id=evil),
        hostile.entry(2, "message", id=evil),  # a duplicate id
        hostile.entry(3, "message", parent_id=evil + "x"),  # a dangling parent
    )
    with pytest.warns(SessionReadWarning) as warned:
        load_session(path)
    for warning in warned:
        assert not any(c in str(warning.message) for c in RAW_CONTROLS), str(warning.message)
    assert any("\\x1b[2J" in str(w.message) for w in warned)
    for argv in (
        ["replay", str(path)],
        ["fork", "--at", "abcd0000-0003", "--output", str(tmp_path / "f.jsonl"), str(path)],
        ["resume", "--agent", "nowhere:agent", str(path), "hi"],
    ):
        done = cli(*argv)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
        assert "SessionReadWarning" in done.stderr, (argv, done.stderr)
        for stream in (done.stdout, done.stderr):
            assert not any(c in stream for c in RAW_CONTROLS), (argv, stream)


def test_a_child_name_that_is_no_file_is_skipped_and_the_parent_read(tmp_path):
    """A FIFO, a directory or a dangling symlink named like a child file (``<id>.p<pid>.jsonl``)
    is skipped with a warning naming it, and the parent session is read (a FIFO would block);
    a dangling symlink among the sessions hides none of them from ``list``."""
    from tests.cli.helpers import cli

    session_id = hostile.ROOT["session_id"]
    parent = hostile.jsonl(
        tmp_path / f"{session_id}.jsonl",
        hostile.ROOT,
        hostile.entry(1, "message"),
        hostile.entry(2, "session.end"),
    )
    os.mkfifo(tmp_path / f"{session_id}.p11.jsonl")
    (tmp_path / f"{session_id}.p12.jsonl").mkdir()
    (tmp_path / f"{session_id}.p13.jsonl").symlink_to(tmp_path / "gone")
    (tmp_path / "session-20991231-000000-ffff0000.jsonl").symlink_to(tmp_path / "gone")
    skipped = [f"{session_id}.p11.jsonl: a FIFO", f"{session_id}.p12.jsonl: a directory"]
    skipped.append(f"{session_id}.p13.jsonl: no such file")
    with pytest.warns(SessionReadWarning) as warned:
        session = load_session(parent)
    assert len(session.events) == 3
    told = " | ".join(str(w.message) for w in warned)
    assert all(s in told for s in skipped), told
    issues: list[fmt.ReadIssue] = []
    assert len(list(iter_entries(parent, issues))) == 3 and len(issues) == 3
    for argv, code in (
        (["view", str(parent)], 1),  # (view: 1 when anything but a torn last line was skipped)
        (["analyze", str(parent)], 0),
        (["export", "--format", "otlp-json", "-", str(parent)], 2),  # (no span: never an empty success)
        (["analyze-dir", str(tmp_path)], 0),
    ):
        done = cli(*argv, timeout=30)
        assert done.returncode == code, (argv, done.stderr)
        assert all(s in done.stdout + done.stderr for s in skipped[:1]), (argv, done.stdout, done.stderr)
    done = cli("list", str(tmp_path), timeout=30)
    assert done.returncode == 0 and session_id in done.stdout, (done.stdout, done.stderr)
