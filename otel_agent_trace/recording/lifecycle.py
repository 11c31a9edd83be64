"""The life of the process's session: start and stop, the automatic session on the first span,
normal exit, SIGTERM, and a forked child that goes on recording."""

from __future__ import annotations

import atexit
import os
import threading
from typing import TYPE_CHECKING, Any

from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import internal_error, logger, report_once
from otel_agent_trace.settings import Settings

if TYPE_CHECKING:
    from .recorder import SessionRecorder

# --- the process's automatic session -------------------------------------------------------

_auto_lock = threading.Lock()
_sigterm_installed = False


def active_recorder() -> SessionRecorder | None:
    """The active session's recorder, if any. (The recorder module is loaded only once a session
    exists: every Python child process of an agent imports this module at start-up.)"""
    rec = sink.active()
    if rec is None:
        return None
    from .recorder import SessionRecorder

    return rec if isinstance(rec, SessionRecorder) else None


def start_session(settings: Settings | None = None, **kwargs: Any) -> SessionRecorder:
    """Stop the active session (if any) and start a new one."""
    from .recorder import SessionRecorder

    current = active_recorder()
    if current is not None:
        current.stop()
    recorder = SessionRecorder(settings, **kwargs).start()
    install_exit_handlers()
    return recorder


def auto_start() -> None:
    """Start the automatic session if none is active (called on the first span)."""
    if sink.active() is not None:
        return
    with _auto_lock:
        if sink.active() is None:
            try:
                start_session()
            except Exception as exc:
                report_once("auto-start", "otel-agent-trace: could not start the session: %s", exc)
                sink.set_autostart(None)


def stop_active() -> list[str]:
    current = active_recorder()
    return current.stop() if current is not None else []


def install_exit_handlers() -> None:
    """Export the session at normal exit and on SIGTERM (once per process)."""
    global _sigterm_installed
    if _sigterm_installed:
        return
    _sigterm_installed = True
    atexit.register(stop_active)
    import signal

    if threading.current_thread() is not threading.main_thread():
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        return
    if previous not in (signal.SIG_DFL, None):
        return  # the application handles SIGTERM; atexit still runs if it exits normally

    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        pass


def _on_sigterm(signum: int, frame: Any) -> None:
    """Write ``session.end`` and the ZIP, send what is queued for OTLP, then die of SIGTERM."""
    import signal

    try:
        stop_active()
    except Exception as exc:  # pragma: no cover - best effort on the way out
        logger.warning("otel-agent-trace: export on SIGTERM failed: %s", exc)
    _flush_forwarding()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _flush_forwarding() -> None:
    """On SIGTERM (the process dies right after, without atexit): send what is queued for OTLP
    backends, within the forwarding processors' bound (``OTEL_BSP_EXPORT_TIMEOUT``)."""
    try:
        from opentelemetry import trace

        from .forwarding import ForwardingSpanProcessor

        for proc in sdk_compat.span_processors(trace.get_tracer_provider()):
            if isinstance(proc, ForwardingSpanProcessor):
                proc.shutdown()
    except Exception as exc:  # pragma: no cover - best effort on the way out
        logger.warning("otel-agent-trace: forwarding on SIGTERM failed: %s", exc)


def _before_fork() -> None:
    """Write what is queued, so the span a forked child runs under has its entry in the file (the
    child's file hangs under it) and no lock of ours is held across the fork."""
    rec = active_recorder()
    if rec is not None and rec.active:
        try:
            rec.flush()
        except Exception as exc:
            internal_error("writing the queue before a fork", exc)


def _after_fork_in_child() -> None:
    global _auto_lock
    _auto_lock = threading.Lock()
    _default_sigterm_in_child()
    rec = active_recorder()
    if rec is not None and rec.active:
        try:
            rec._continue_in_forked_child()
        except Exception as exc:
            sink.set_active(None)  # record nothing rather than corrupt the parent's file
            report_once("fork", "otel-agent-trace: cannot record in the forked process: %s", exc)


def _default_sigterm_in_child() -> None:
    """A process forked without exec (a multiprocessing worker) dies of SIGTERM as it would
    without us. With a Python handler, a SIGTERM that lands just before the worker blocks in a C
    call (waiting on its task queue) is never acted on, and ``Pool.terminate()`` then waits for
    it forever. Its entries are on disk already; only its ``session.end`` is left out."""
    import signal

    try:
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread of the child: nothing we can do
        pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
