"""The model replay in progress, for capture code that asks per call: the one bridge between
:mod:`otel_agent_trace.model_replay`, which sets the player, and capture code, which reads it
(framework tool wrappers, ``@oat.tool``, the HTTP exchange hooks). Capture code never imports
``model_replay``; with no replay running, asking costs one global read (``player is None``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class ModelReplayStop(BaseException):
    """The replay stopped the run (a divergence with ``on_divergence="stop"``, or a refusal): a
    ``BaseException``, so the agent's own ``except Exception`` never swallows it. Capture code
    that must let it through (or end a framework's run with it) catches this class."""


class Player(Protocol):
    """What capture code asks of a model replay (``model_replay.Player``)."""

    def tool_result(self, name: str, call_id: str | None, /) -> tuple[bool, Any]: ...

    def answer(self, module: Any, request: Any, send: Any, /) -> Any: ...

    async def answer_async(self, module: Any, request: Any, send: Any, /) -> Any: ...


player: Player | None = None  # the replay in progress, else None
_listeners: list[Callable[[Player | None], None]] = []


def set_player(new: Player | None) -> None:
    """Make ``new`` the replay in progress (``None``: none; the network again), and tell the
    capture code that installs hooks for a replay (the HTTP exchange hooks)."""
    global player
    player = new
    for listener in list(_listeners):
        listener(new)


def on_change(listener: Callable[[Player | None], None]) -> None:
    """Call ``listener(player)`` whenever the replay in progress changes."""
    _listeners.append(listener)


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
