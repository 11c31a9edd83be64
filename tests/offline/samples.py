"""Sessions written in the foreign formats the loader reads, as their own code writes them
(``/work/shared/REFERENCE.md`` §1): a DevDuck session ZIP and DM-Code-Agent JSONL (2.0 and legacy)."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

T0 = 1_706_973_052_000_000_000  # 2024-02-03T15:10:52Z
SECOND = 1_000_000_000


def devduck_events() -> list[dict[str, Any]]:
    """A DevDuck run: start, a message, two tool calls with five file opens and an HTTP GET
    between them, a snapshot, stop."""

    def ev(i: float, layer: str, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp_ns": T0 + int(i * SECOND),
            "layer": layer,
            "event_type": kind,
            "data": data,
            "trace_id": None,
        }

    meta = {"session_id": "session-20240203-151052", "start_time": "2024-02-03T15:10:52", "hostname": "duck"}
    events = [
        ev(0, "agent", "session.start", meta),
        ev(1, "agent", "message", {"role": "user", "content_preview": "analyze this code"}),
        ev(2, "tool", "tool.call", {"name": "shell", "args": {"command": "ls -la"}}),
    ]
    events += [
        ev(2.1 + i / 10, "sys", "file.open", {"path": f"/tmp/f{i}.txt", "mode": "r"}) for i in range(5)
    ]
    events += [
        ev(2.7, "sys", "http.get", {"url": "https://example.invalid/x"}),
        ev(3, "tool", "tool.result", {"name": "shell", "result_preview": "total 0", "duration_ms": 1000}),
        ev(4, "agent", "message", {"role": "assistant", "content_preview": "Found 3 issues"}),
        ev(
            5, "agent", "snapshot.created", {"snapshot_id": 1, "description": "after", "messages_captured": 2}
        ),
        ev(10, "agent", "session.stop", {"duration": 10.0, "events": 13}),
    ]
    return events


def devduck_snapshots() -> list[dict[str, Any]]:
    return [
        {
            "timestamp": (T0 + 5 * SECOND) / 1e9,
            "snapshot_id": 1,
            "agent_messages_count": 2,
            "tools_loaded": ["shell"],
            "system_prompt_hash": "abc",
            "env_vars_redacted": [],
            "cwd": "/tmp",
            "events_since_last": 12,
            "agent_messages": [
                {"role": "user", "content": "analyze this code"},
                {"role": "assistant", "content": "Found 3 issues in full"},
            ],
            "system_prompt": "You are DevDuck...",
            "last_query": "analyze this code",
            "last_result": "Found 3 issues...",
            "model_info": {"type": "x", "model_id": "m", "provider": "p"},
            "description": "after",
        }
    ]


class Trap:
    """Unpickling this creates a file: proof that code from a session file ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def write_devduck_zip(
    path: Path, events: list[dict[str, Any]] | None = None, trap: Path | None = None, **members: bytes
) -> Path:
    """A DevDuck session ZIP: lines joined by ``\\n`` with no trailing newline, members indented,
    ``session.pkl`` last (a booby trap when ``trap`` is given)."""
    events = devduck_events() if events is None else events
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("events.jsonl", "\n".join(json.dumps(e) for e in events))
        zf.writestr("snapshots.json", json.dumps(devduck_snapshots(), indent=2))
        meta = {
            "session_id": "session-20240203-151052",
            "start_time": "2024-02-03T15:10:52",
            "hostname": "duck",
            "serializer": "dill",
            "end_time": "2024-02-03T15:11:02",
            "duration_seconds": 10.0,
            "total_events": len(events) - 1,
            "total_snapshots": 1,
        }
        zf.writestr("metadata.json", json.dumps(meta, indent=2))
        zf.writestr("session.pkl", pickle.dumps(Trap(trap) if trap else {"events": []}))
        for name, data in members.items():
            zf.writestr(name, data)
    return path


RUN_ID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"


def dm_entries(legacy: bool = False) -> list[dict[str, Any]]:
    """A DM-Code-Agent run: start, the task, a model call, two tool calls (one failed), end."""
    steps = [
        ("runtime", {"provider": "deepseek", "cli": "dm-agent"}),
        (
            "run_start",
            {"task": "Fix retry.py and run tests", "cwd": "/w", "tools": ["read_file", "run_tests"]},
        ),
        ("message", {"role": "user", "kind": "task", "content": "Fix retry.py and run tests"}),
        ("llm_call", {"message_count": 1, "prompt_chars": 26}),
        (
            "message",
            {"role": "assistant", "kind": "model_response", "content_chars": 40, "content_sha256": "ab"},
        ),
        (
            "tool_call",
            {
                "action": "read_file",
                "action_input": {"path": "retry.py"},
                "observation": "...",
                "failure": False,
            },
        ),
        (
            "tool_call",
            {"action": "run_tests", "action_input": {}, "observation": "1 failed", "failure": True},
        ),
        ("run_end", {"status": "success", "final_answer": "done", "duration": 3.5}),
    ]
    out = []
    for seq, (event, payload) in enumerate(steps):
        entry: dict[str, Any] = {}
        if not legacy:
            entry["id"] = f"{RUN_ID[:8]}-{seq:04d}"
            entry["parent_id"] = f"{RUN_ID[:8]}-{seq - 1:04d}" if seq else ""
        entry["timestamp"] = f"2024-02-03T15:10:{52 + seq:02d}.250000+00:00"
        entry["run_id"] = RUN_ID
        entry["event"] = event
        entry["payload"] = payload
        out.append(entry)
    return out


def write_dm(path: Path, legacy: bool = False) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in dm_entries(legacy)))
    return path
