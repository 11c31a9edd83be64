"""The model replay API: start, stop, the ``model_replay`` block, and the start-up hook."""

from __future__ import annotations

import atexit
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from otel_agent_trace._internal import replay

from ._player import Player
from ._recording import load_recording


def start(
    session: str | os.PathLike[str],
    *,
    on_divergence: str = "stop",
    live_url: str | None = None,
    tools: str = "recorded",
    report_path: str | os.PathLike[str] | None = None,
) -> Player:
    """Start answering this process's model requests from ``session``; returns the player
    (``report()``). Stop with :func:`stop`. Raises :class:`RecordingError` (trace tier, no
    exchanges) and ``ValueError`` (bad options) before anything changes."""
    player = Player(
        load_recording(session),
        on_divergence=on_divergence,
        live_url=live_url,
        tools=tools,
        report_path=report_path,
    )
    _use(player)
    return player


def _use(player: Player | None) -> None:
    """Make ``player`` the replay in progress for capture code (``None``: none). The HTTP
    instrumentation's hooks answer requests from it (importing it registers them)."""
    import otel_agent_trace.instrumentation.system.http  # noqa: F401

    replay.set_player(player)


def stop(player: Player | None = None) -> None:
    """Stop the replay in progress (``player``: only if it is that one); the network again."""
    current = replay.player
    if current is None or (player is not None and current is not player):
        return
    _use(None)
    if isinstance(current, Player):  # (ours: the bridge types it by what capture code asks)
        current.save_report()


@contextmanager
def model_replay(
    session: str | os.PathLike[str],
    *,
    on_divergence: str = "stop",
    live_url: str | None = None,
    tools: str = "recorded",
    report_path: str | os.PathLike[str] | None = None,
) -> Iterator[Player]:
    """Within the block, every model request is answered from ``session`` (a checkpoint-tier
    ``.jsonl`` or ZIP). ``on_divergence``: ``"stop"`` (raise :class:`ModelReplayDivergence` at
    the first request that differs from the recorded one), ``"continue"`` (answer as recorded
    anyway) or ``"live"`` (send it and the rest to ``live_url``). ``tools="recorded"`` (the
    default) answers the agent's tool calls (``@oat.tool`` and the framework tools we instrument)
    from the recording and runs none; ``tools="live"`` runs your real tools with the arguments
    the recorded model answers ask for: only for a recording you trust. The player's
    ``report()`` tells what happened."""
    player = start(
        session, on_divergence=on_divergence, live_url=live_url, tools=tools, report_path=report_path
    )
    span_scope = _link_span(player)
    try:
        yield player
    finally:
        stop(player)
        if span_scope is not None:
            span_scope.__exit__(None, None, None)


def _link_span(player: Player) -> Any:
    """A ``model_replay`` span around the block, naming the source session (the link for a
    session that was already recording when the block started)."""
    try:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        from otel_agent_trace._internal import genai_spans as gs

        span = gs.tracer().start_span(
            "model_replay",
            attributes={
                "agent_trace.replay.source_session": player.recording.session_id,
                "agent_trace.replay.source_path": player.recording.path,
            },
        )
        token = otel_context.attach(trace.set_span_in_context(span))
    except Exception:  # no OpenTelemetry set-up: the replay still runs
        return None

    class _Scope:
        def __exit__(self, *exc: Any) -> None:
            otel_context.detach(token)
            span.end()

    return _Scope()


def _start_in_child(settings: Any) -> Player:
    """A child process of the replayed agent: its requests were not recorded with the parent's
    (each process numbers its own), so none is answered: every one is refused, never sent."""
    from ._recording import Recording

    empty = Recording(str(settings.model_replay), "", "checkpoint")
    player = Player(empty, on_divergence="stop")
    _use(player)
    return player


def start_from_settings() -> Player | None:
    """At start-up (the HTTP instrumentation, under ``opentelemetry-instrument``): the replay
    ``AGENT_TRACE_MODEL_REPLAY`` asks for. A session that cannot answer stops the program with
    the reason, before the agent runs (the user asked for a replay: running live instead would
    send requests)."""
    from otel_agent_trace.settings import get_settings

    settings = get_settings()
    if settings.model_replay is None:
        return None
    if settings.inherited_session_id:
        return _start_in_child(settings)
    try:
        player = start(
            settings.model_replay,
            on_divergence=settings.model_replay_on_divergence,
            live_url=settings.model_replay_live_url,
            tools=settings.model_replay_tools,
            report_path=settings.model_replay_report,
        )
    except (ValueError, OSError) as exc:  # RecordingError is a ValueError
        import sys

        print(f"otel-agent-trace: model replay: {exc}", file=sys.stderr, flush=True)
        os._exit(3)
    player.save_report()
    atexit.register(player.save_report)
    _end_quietly_at_a_stop()
    return player


def _end_quietly_at_a_stop() -> None:
    """A replayed program that the replay stopped (``ModelReplayDivergence``,
    ``ModelReplayRefused``: raised in the agent, and agents rarely catch a ``BaseException``)
    ends with one line, not a Python traceback through the SDK's internals: what differs was
    printed when it happened, and ``otel-agent-trace replay`` prints the report after. Exit
    status 1 as for any uncaught exception; any other exception is left to the hook before."""
    import sys
    import threading

    from ._player import ModelReplayDivergence, ModelReplayStop

    def say(exc: BaseException) -> None:
        # A divergence was printed as it happened (its diff); a refusal is said here.
        text = "it stopped the program there" if isinstance(exc, ModelReplayDivergence) else str(exc)
        print(f"otel-agent-trace: {text} ({type(exc).__name__})", file=sys.stderr, flush=True)

    before = sys.excepthook

    def excepthook(kind: Any, value: Any, tb: Any) -> None:
        if isinstance(value, ModelReplayStop):
            say(value)
        else:
            before(kind, value, tb)

    thread_before = threading.excepthook

    def thread_excepthook(args: Any) -> None:
        if isinstance(args.exc_value, ModelReplayStop):
            say(args.exc_value)
        else:
            thread_before(args)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook
