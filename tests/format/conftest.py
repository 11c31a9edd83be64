"""Fixtures shared by the session-format tests."""

from __future__ import annotations

import pytest

from otel_agent_trace.recording import snapshot_scan


@pytest.fixture(params=[4 << 20, 64 << 10, 4096, 301, 64], ids=lambda n: f"chunk{n}")
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The ZIP export's read size, from its own (4 MB) down to lines split over many reads."""
    monkeypatch.setattr(snapshot_scan, "_CHUNK", request.param)
    return request.param
