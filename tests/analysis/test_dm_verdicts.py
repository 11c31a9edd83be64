"""DM-Code-Agent files read with DM's own verdicts (``/work/shared/REFERENCE.md`` §9): files made
the way DM's writer makes them (``dm_agent/tracing/writer.py`` at 968fa18: keys sorted, ids
``<run_id[:8]>-<seq:04d>`` from 1, each under the one before; pre-2.0 files without ids), every
expected number worked out by hand from §9's rules (the comment beside it says how)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.analysis import analyze_session

RUN = "0123456789abcdef0123456789abcdef"
RUN2 = "fedcba9876543210fedcba9876543210"


def dm_lines(
    steps: list[tuple[str, dict[str, Any]]],
    *,
    run_id: str = RUN,
    legacy: bool = False,
    timestamps: list[str] | None = None,
    first_seq: int = 1,
    parent: str = "",
) -> list[dict[str, Any]]:
    """Entries as DM's ``TraceWriter.record`` writes them: ``{id, parent_id, timestamp, run_id,
    event, payload}`` (2.0), or without ``id`` / ``parent_id`` (pre-2.0)."""
    out = []
    for n, (event, payload) in enumerate(steps):
        seq = first_seq + n
        entry: dict[str, Any] = {
            "timestamp": timestamps[n] if timestamps else f"2026-01-02T03:04:{seq % 60:02d}.000001+00:00",
            "run_id": run_id,
            "event": event,
            "payload": payload,
        }
        if not legacy:
            entry["id"] = f"{run_id[:8]}-{seq:04d}"
            entry["parent_id"] = parent
            parent = entry["id"]
        out.append(entry)
    return out


def write(path: Path, *groups: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for group in groups for e in group),
        encoding="utf-8",
    )
    return path


# --- 1. a pre-2.0 file whose timestamps are not ISO-8601 --------------------------------------


def test_a_pre_2_0_file_with_dm_test_timestamps_is_read_with_time_unknown(tmp_path):
    # DM's own tests write "t0", "t1", …: DM never parses a timestamp, order is file order.
    steps = [
        ("run_start", {"task": "fix it", "schema_version": "1.2"}),
        ("llm_call", {"step_number": 1, "message_count": 2}),
        ("tool_call", {"step_number": 1, "action": "read_file", "action_input": {"path": "a.py"},
                       "observation": "x = 1", "failed": False}),
        ("step", {"step_number": 1, "action": "read_file", "observation": "x = 1"}),
        ("run_end", {"status": "success", "final_answer": "done", "metadata": {}}),
    ]  # fmt: skip
    path = write(
        tmp_path / "legacy.jsonl", dm_lines(steps, legacy=True, timestamps=[f"t{i}" for i in range(5)])
    )
    session = load_session(path)
    assert [e.id for e in session.events] == [f"legacy-{i:04d}" for i in range(5)]
    assert [e.type for e in session.events] == [s[0] for s in steps]  # file order
    result = analyze_session(path)
    assert result["format"] == "dm-code-agent" and result["entries"] > 0
    assert result["time_known"] is False  # no entry had a time we could read
    assert result["duration_s"] is None  # unknown, not 0: run_end has no duration_seconds
    assert result["failure"]["first"] is None
    with_duration = write(
        tmp_path / "measured.jsonl",
        dm_lines(
            [*steps[:-1], ("run_end", {"status": "success", "duration_seconds": 2.5, "metadata": {}})],
            legacy=True,
            timestamps=[f"t{i}" for i in range(5)],
        ),
    )
    assert analyze_session(with_duration)["duration_s"] == 2.5  # the agent's own measurement
