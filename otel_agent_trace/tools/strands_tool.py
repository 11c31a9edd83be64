"""``session_recorder`` as a Strands Agents tool: ``Agent(tools=[session_recorder])``."""

from __future__ import annotations

from typing import Any

from strands import tool

from . import recorder


@tool(name="session_recorder", description=recorder.DESCRIPTION)
def session_recorder(
    action: str,
    description: str | None = None,
    name: str | None = None,
    filename: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Record this agent session: start, snapshot, stop, status, list.

    Args:
        action: One of start, snapshot, stop, status, list.
        description: snapshot: what this point in the session is.
        name: start: a label for the session.
        filename: stop: also save the ZIP under this plain file name in the sessions directory.
        limit: list: how many sessions (default 10).
    """
    answer = recorder.session_recorder(action, description, name, filename, limit)
    return {"status": answer["status"], "content": [{"text": answer["message"]}, {"json": answer}]}
