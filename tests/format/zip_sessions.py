"""A session recorded by the real recorder for the ZIP export's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.settings import Settings


def record_session(directory: Path, *, turns: int = 30, during: Any = None) -> Any:
    """A session in both tiers (started, not stopped): messages, tool calls with "snapshot" and
    "message" in their results, an OpenAI Responses item (its own ``id`` and ``type``), one
    snapshot a turn — of the whole history (by reference in format 1.2), of a window, of old
    messages, of none. ``during(session, turn)`` is called at the start of each turn."""
    s = oat.session("zip", directory=directory, tier="both", settings=Settings(directory=directory)).start()

    @oat.tool
    def lookup(query: str) -> dict[str, Any]:
        return {"message": "snapshot", "type": "snapshot", "text": query * 3}

    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a test."}]
    for turn in range(turns):
        if during is not None:
            during(s, turn)
        user = {"role": "user", "content": f"question {turn} " + "y" * (turn * 53 % 700)}
        oat.record_message("user", user["content"])
        lookup(f"q{turn}")
        answer: dict[str, Any] = {"role": "assistant", "content": f"answer {turn} snapshot"}
        if turn % 7 == 3:  # an OpenAI Responses item: its own id and type
            answer = {"id": f"fc_{turn}", "type": "function_call", "role": "assistant", "content": None}
        history += [user, answer]
        if turn % 4 == 0:
            oat.snapshot(f"turn {turn}", messages=list(history), system_prompt="You are a test.")
        elif turn % 4 == 1:
            oat.snapshot(f"window {turn}", messages=history[-4:], state={"turn": turn})
        elif turn % 4 == 2:
            oat.snapshot(f"first {turn}", messages=history[:3])
        else:
            oat.snapshot(f"empty {turn}", messages=[])
    return s


def resolved(snapshots: list[dict[str, Any]], files: list[Path]) -> list[dict[str, Any]]:
    """A ZIP's ``snapshots.json`` (formats 2 and 3: each snapshot's message ids, by reference to the one
    before) resolved as a reader resolves it, from the session's files: DevDuck's shape, each
    snapshot's messages whole — what ``build_snapshots`` gives from every entry."""
    assert all("agent_message_ids" in s and "agent_messages" not in s for s in snapshots)
    assert all(
        list(s) == [*fmt.DEVDUCK_SNAPSHOT_KEYS[:8], "agent_message_ids", *fmt.DEVDUCK_SNAPSHOT_KEYS[9:]]
        for s in snapshots
    )
    messages = {
        e["id"]: e
        for e in fmt.iter_files(files, [])
        if e.get("type") == fmt.MESSAGE and isinstance(e.get("id"), str)
    }
    return fmt.resolve_snapshots(snapshots, messages)
