"""The replay in progress, for capture code that asks per call (``@oat.tool``, tool wrappers):
one global read when no replay runs. Set by :func:`otel_agent_trace.model_replay.start`."""

from __future__ import annotations

from typing import Any

player: Any = None  # the active ``Player``, else None


def recorded_tool_result(name: str, call_id: str | None = None) -> tuple[bool, Any]:
    """For a tool wrapper, per call: ``(True, result)`` when a model replay with
    ``tools="recorded"`` answers this call from the recording (do not run the tool; return
    ``result``), else ``(False, None)``. One global read when no replay runs. Raises the replay's
    stop (``ModelReplayDivergence``, a ``BaseException``) when no recorded call is left and the
    replay stops at divergences."""
    current = player
    if current is None:
        return False, None
    return current.tool_result(name, call_id)
