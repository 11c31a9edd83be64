"""``export-dir`` exports every session file ``analyze-dir`` reads, whatever its name (ours, DevDuck's
ZIPs, DM-Code-Agent's JSONL), and says a file it cannot read without stopping at it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from tests.offline import samples

from .helpers import cli, record


def _span_count(path: Path) -> int:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return sum(len(ss["spans"]) for d in lines for rs in d["resourceSpans"] for ss in rs["scopeSpans"])


def _mixed(directory: Path) -> dict[str, Path]:
    ours = record(directory)
    return {
        "ours": ours,
        "devduck": samples.write_devduck_zip(directory / "duck-run.zip"),
        "dm": samples.write_dm(directory / "dm-trace.jsonl"),
        "dm-legacy": samples.write_dm(directory / "old-trace.jsonl", legacy=True),
    }


def test_every_readable_session_is_exported_and_an_unreadable_one_is_said(tmp_path):
    d = tmp_path / "d"
    sessions = _mixed(d)
    (d / "a-notes.jsonl").write_text("this is not JSON\n")  # sorted first: the rest still go
    (d / "b-broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    out = tmp_path / "out"
    done = cli("export-dir", str(d), "--format", "otlp-json", str(out))
    assert done.returncode == 1, done.stderr
    assert f"{d / 'a-notes.jsonl'}" in done.stderr and f"{d / 'b-broken.zip'}" in done.stderr
    assert "Traceback" not in done.stderr
    stem = sessions["ours"].name[: -len(fmt.JSONL_SUFFIX)]
    written = {p.name: _span_count(p) for p in out.iterdir()}
    assert written == {
        f"{stem}.otlp.jsonl": 5,
        "duck-run.otlp.jsonl": len(load_session(sessions["devduck"]).spans),
        "dm-trace.otlp.jsonl": len(load_session(sessions["dm"]).spans),
        "old-trace.otlp.jsonl": len(load_session(sessions["dm-legacy"]).spans),
    }
    assert all(written.values())
    assert f"{d}: 4 of 6 sessions written (2 failed: see above)" in done.stdout


def test_json_lists_each_session_and_its_error(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    samples.write_devduck_zip(d / "duck-run.zip")
    samples.write_dm(d / "dm-trace.jsonl")
    (d / "notes.jsonl").write_text('{"hello": "world"}\n')
    done = cli("export-dir", str(d), "--format", "jaeger-json", str(tmp_path / "out"), "--json")
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert answer["failed"] == 1
    by_file = {Path(s["session"]).name: s for s in answer["sessions"]}
    assert set(by_file) == {"duck-run.zip", "dm-trace.jsonl", "notes.jsonl"}
    assert "error" in by_file["notes.jsonl"]
    assert (
        by_file["dm-trace.jsonl"]["source_format"] == "dm-code-agent" and by_file["dm-trace.jsonl"]["spans"]
    )
    assert "error" not in by_file["duck-run.zip"]


def test_a_session_is_sent_once_however_many_files_it_has(tmp_path):
    """Its .jsonl, child files, checkpoint tier and ZIP: one session, one export (as analyze-dir
    counts it)."""
    d = tmp_path / "d"
    first = record(d)
    assert list(d.glob("*.zip")) and list(d.glob(f"*{fmt.CHECKPOINT_SUFFIX}{fmt.JSONL_SUFFIX}"))
    done = cli("export-dir", str(d), "--format", "otlp-json", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == [
        first.name.replace(fmt.JSONL_SUFFIX, ".otlp.jsonl")
    ]
    assert "1 of 1 sessions written" in done.stdout


def test_an_empty_or_missing_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    assert (
        cli("export-dir", str(tmp_path / "empty"), "--format", "otlp-json", str(tmp_path / "o")).returncode
        == 0
    )
    missing = cli("export-dir", str(tmp_path / "nope"), "--format", "otlp-json", str(tmp_path / "o"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    shutil.rmtree(tmp_path / "o", ignore_errors=True)
