"""A DM-Code-Agent ``timestamp`` that is not ISO-8601 (DM's own tests write ``"t0"``; DM never
reads it) was exported as time 0: spans in 1970, where no Jaeger or Tempo search finds them. Such
times are now estimated from file order and the file's modification time, and said."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from otel_agent_trace.offline.export.times import STEP_NS, estimate
from tests.offline import samples

from .helpers import cli

MS = 1_000_000
MTIME_NS = int(datetime(2024, 2, 3, 15, 11, 2, tzinfo=timezone.utc).timestamp()) * 1_000_000_000
T0 = int(datetime(2024, 2, 3, 15, 10, 52, tzinfo=timezone.utc).timestamp()) * 1_000_000_000


def _dm(path: Path, known: dict[int, str] | None = None) -> Path:
    """DM's sample run with ``"t<n>"`` timestamps, but those ``known`` gives (by position)."""
    entries = samples.dm_entries()
    for seq, entry in enumerate(entries):
        entry["timestamp"] = (known or {}).get(seq, f"t{seq}")
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    os.utime(path, ns=(MTIME_NS, MTIME_NS))
    return path


def _export(path: Path, out: Path) -> tuple[dict[str, dict], str]:
    done = cli("export", str(path), "--format", "otlp-json", str(out))
    assert done.returncode == 0, done.stderr
    spans = {}
    for line in out.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
                    s["attrs"] = attrs
                    spans[attrs["agent_trace.entry.id"]] = s
    return spans, done.stderr


def _start(span: dict) -> int:
    return int(span["startTimeUnixNano"])


def _end(span: dict) -> int:
    return int(span["endTimeUnixNano"])


def test_a_file_without_any_time_ends_at_its_modification_time_in_file_order(tmp_path):
    spans, stderr = _export(_dm(tmp_path / "dm.jsonl"), tmp_path / "out.jsonl")
    run, read, tests = (spans[f"{samples.RUN_ID[:8]}-{n:04d}"] for n in (1, 5, 6))
    assert _end(run) == MTIME_NS, "the last entry (run_end) was written when the file last was"
    assert _start(read) == _end(read) == MTIME_NS - 2 * STEP_NS
    assert _start(tests) == MTIME_NS - 1 * STEP_NS, "file order kept"
    assert _start(run) == MTIME_NS - 3_500 * MS, "the run keeps the duration DM measured (3.5 s)"
    assert all(s["attrs"]["agent_trace.time.estimated"] is True for s in spans.values())
    assert "8 of 8 entries have no ISO-8601 timestamp" in stderr and "agent_trace.time.estimated" in stderr


def test_unknown_times_follow_the_nearest_known_one(tmp_path):
    known = {0: "2024-02-03T15:10:52+00:00", 5: "2024-02-03T15:10:53+00:00", 7: "2024-02-03T15:11:02+00:00"}
    spans, stderr = _export(_dm(tmp_path / "dm.jsonl", known), tmp_path / "out.jsonl")
    run, read, tests = (spans[f"{samples.RUN_ID[:8]}-{n:04d}"] for n in (1, 5, 6))
    assert _start(read) == T0 + 1_000_000_000 and "agent_trace.time.estimated" not in read["attrs"]
    assert _start(tests) == T0 + 1_000_000_000 + STEP_NS and tests["attrs"]["agent_trace.time.estimated"]
    assert _start(run) == T0 + STEP_NS and _end(run) == T0 + 10_000_000_000
    assert run["attrs"]["agent_trace.time.estimated"] is True
    assert "5 of 8 entries have no ISO-8601 timestamp" in stderr


def test_a_file_with_every_time_is_not_touched(tmp_path):
    spans, stderr = _export(samples.write_dm(tmp_path / "dm.jsonl"), tmp_path / "out.jsonl")
    assert not any("agent_trace.time.estimated" in s["attrs"] for s in spans.values())
    assert "ISO-8601" not in stderr


def test_estimates_stay_between_the_known_times_around_them():
    assert estimate([0, 0, 100 * MS, 0, 0, 101 * MS, 0], 0) == [
        98 * MS, 99 * MS, 100 * MS, 100 * MS + MS // 3, 100 * MS + 2 * (MS // 3), 101 * MS, 102 * MS,
    ]  # fmt: skip
    assert estimate([0, 0, 0], 50 * MS) == [48 * MS, 49 * MS, 50 * MS]
    assert estimate([5, 0, 5], 0) == [5, 5, 5], "never before a known time it follows"
