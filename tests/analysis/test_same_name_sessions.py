"""A ``.jsonl`` and a ``.zip`` of the same name: the same session archived counts once; two
different sessions both count, in ``analyze-dir`` and ``export-dir`` (real recordings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.analysis import analyze_dir, find_sessions
from tests.export.helpers import cli, record
from tests.offline import samples


def _zip_of(jsonl: Path) -> Path:
    return jsonl.with_name(jsonl.name[: -len(fmt.JSONL_SUFFIX)] + fmt.ZIP_SUFFIX)


def _session_id(jsonl: Path) -> str:
    return json.loads(jsonl.read_text().splitlines()[0])["session_id"]


def test_a_zip_counts_beside_a_jsonl_of_its_name_only_when_its_session_differs(tmp_path: Path) -> None:
    first, second = record(tmp_path / "one"), record(tmp_path / "two")
    assert _session_id(first) != _session_id(second)
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(first, d / "same.jsonl")  # one session, and its ZIP: counted once
    shutil.copy(_zip_of(first), d / "same.zip")
    shutil.copy(first, d / "mixed.jsonl")  # two sessions under one name: both count
    shutil.copy(_zip_of(second), d / "mixed.zip")
    samples.write_dm(d / "foreign.jsonl")  # DM's run and DevDuck's ZIP: two sessions as well
    samples.write_devduck_zip(d / "foreign.zip")

    assert [p.name for p in find_sessions(d)] == [
        "foreign.jsonl",
        "foreign.zip",
        "mixed.jsonl",
        "mixed.zip",
        "same.jsonl",
    ]
    summary = analyze_dir(d, jobs=1)
    assert summary["sessions"] == 5 and summary["unreadable"] == 0
    ids = {Path(row["file"]).name: row["session_id"] for row in summary["rows"]}
    assert ids["mixed.jsonl"] == ids["same.jsonl"] == _session_id(first)
    assert ids["mixed.zip"] == _session_id(second)

    out = tmp_path / "out"
    done = cli("export-dir", str(d), "--format", "otlp-json", str(out))
    assert done.returncode == 0, done.stderr
    assert f"{d}: 5 of 5 sessions written" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "foreign.otlp.jsonl",
        "foreign.zip.otlp.jsonl",  # the second file of the name: by its whole name
        "mixed.otlp.jsonl",
        "mixed.zip.otlp.jsonl",
        "same.otlp.jsonl",
    ]
    trace_ids = {
        p.name: {
            span["traceId"]
            for line in p.read_text().splitlines()
            for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"]
            for span in ss["spans"]
        }
        for p in out.iterdir()
    }
    assert trace_ids["mixed.otlp.jsonl"] == trace_ids["same.otlp.jsonl"]
    assert trace_ids["mixed.zip.otlp.jsonl"].isdisjoint(trace_ids["mixed.otlp.jsonl"])
