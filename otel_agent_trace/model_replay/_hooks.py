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


def answer_tool_call(span: Any, name: str, call_id: str | None = None) -> tuple[bool, Any]:
    """:func:`recorded_tool_result` for a framework tool wrapper that has the call's span: when
    answered, marks ``span`` with ``agent_trace.replay.tool_result = "recorded"`` (as ``@oat.tool``
    does). Callers check ``player is None`` first, so no replay costs one global read."""
    found, result = recorded_tool_result(name, call_id)
    if found and span is not None:
        span.set_attribute("agent_trace.replay.tool_result", "recorded")
    return found, result


def answer_call(call: Any, name: str, call_id: str | None = None) -> tuple[bool, Any]:
    """:func:`answer_tool_call` for a wrapper's tool call (``owned``, ``span``, ``fail``,
    ``finish``): answered, the call is finished with the recorded result; the replay's stop
    fails it and is raised. A call that joined an enclosing tool span is left to that span's
    owner (it asked already): ``(False, None)``."""
    if not call.owned:
        return False, None
    try:
        found, result = answer_tool_call(call.span, name, call_id)
    except BaseException as exc:  # the replay's stop: no recorded call left
        call.fail(exc)
        raise
    if found:
        call.finish(result)
    return found, result
