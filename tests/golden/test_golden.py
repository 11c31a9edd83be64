"""A recording is reproducible byte for byte once its ids, clocks and host are fixed
(otel_agent_trace.testing), and matches the golden file kept here: a change to what the recorder
writes shows up as a diff of tests/golden/*.jsonl (regenerate: AGENT_TRACE_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SESSION = "session-20231114-221320-0a0b0c0d"


def _record(directory: Path, tier: str) -> Path:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(directory))
    env.pop("AGENT_TRACE_SESSION_ID", None)
    subprocess.run(
        [sys.executable, "-m", "tests.golden.record_golden", str(directory), tier],
        check=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    return directory


@pytest.mark.parametrize("tier", ["trace", "checkpoint"])
def test_a_fixed_recording_is_byte_for_byte_the_golden_one(tmp_path, tier):
    suffix = ".checkpoint" if tier == "checkpoint" else ""
    first = _record(tmp_path / "a", tier) / f"{SESSION}{suffix}.jsonl"
    second = _record(tmp_path / "b", tier) / f"{SESSION}{suffix}.jsonl"
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first.with_suffix(".zip")) as a, zipfile.ZipFile(second.with_suffix(".zip")) as b:
        assert {n: a.read(n) for n in a.namelist()} == {n: b.read(n) for n in b.namelist()}
    golden = HERE / f"session{suffix}.jsonl"
    if os.environ.get("AGENT_TRACE_UPDATE_GOLDEN"):
        golden.write_bytes(first.read_bytes())
    assert first.read_bytes().decode() == golden.read_text(), "regenerate with AGENT_TRACE_UPDATE_GOLDEN=1"
