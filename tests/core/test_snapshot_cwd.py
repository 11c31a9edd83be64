"""A snapshot records the working directory at its moment: the agent may change it, or remove it
while it is in it."""

from __future__ import annotations

import os

from otel_agent_trace.offline.loader import load_session
from otel_agent_trace.recording import SessionRecorder
from otel_agent_trace.settings import Settings


def test_each_snapshot_has_the_directory_of_its_moment_and_a_removed_one_keeps_the_last(
    tmp_path, monkeypatch
):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    recorder = SessionRecorder(Settings(directory=tmp_path / "sessions", tiers=("checkpoint",))).start()
    try:
        monkeypatch.chdir(first)
        recorder.snapshot("in first", messages=[{"role": "user", "content": "hi"}])
        monkeypatch.chdir(second)
        recorder.snapshot("in second", messages=[{"role": "user", "content": "hi"}])
        os.rmdir(second)  # the agent removes the directory it is in
        assert recorder.snapshot("second removed", messages=[{"role": "user", "content": "hi"}]) == 3
        path = recorder.tiers[0].writer.path
    finally:
        monkeypatch.chdir(tmp_path)
        recorder.stop()
    snapshots = load_session(path).snapshots
    assert [s["description"] for s in snapshots] == ["in first", "in second", "second removed"]
    assert [s["cwd"] for s in snapshots] == [str(first), str(second), str(second)]
