"""The life of the process's session: start and stop, the automatic session on the first span,
normal exit, SIGTERM, and a forked child that goes on recording.

While the session is being stopped at exit or on SIGTERM, a repeated SIGTERM or SIGINT (a
supervisor's second signal, an impatient Ctrl-C) is deferred, so the ZIP being written is finished;
one that comes after ``AGENT_TRACE_SIGNAL_GRACE_MS`` (default 5000) abandons the ZIP (its
temporary file removed; the JSONL, ``session.end`` included, is the complete record) and the
process goes on dying.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import internal_error, logger, report_once
from otel_agent_trace.settings import Settings

if TYPE_CHECKING:
    from .recorder import SessionRecorder

# --- the process's automatic session -------------------------------------------------------

_auto_lock = threading.Lock()
_sigterm_installed = False

_ARCHIVE = __name__.rpartition(".")[0] + ".archive"

_deadline: float | None = None  # set while stopping at exit / on SIGTERM: repeated signals wait
_deferred: list[int] = []  # signals that came meanwhile, in order
_forwarding = False  # SIGTERM: the ZIPs are written, what is queued for OTLP is being sent


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
    if recorder.settings.write_zip and not recorder.is_child:
        # Loaded now, not at exit: after an unhandled KeyboardInterrupt, CPython exits with status
        # 1 instead of dying of SIGINT if an atexit callback runs exec() (which an import that
        # defines a dataclass or namedtuple does).
        from . import archive  # noqa: F401
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
    atexit.register(_stop_at_exit)
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


def _stop_at_exit() -> None:
    """atexit (normal exit, an unhandled Ctrl-C, ``sys.exit``): stop the session with SIGINT and
    SIGTERM deferred. A SIGTERM that came meanwhile is then acted on (the process dies of it); a
    repeated Ctrl-C is not (the process is exiting already)."""
    import signal

    saved = _defer_signals()
    try:
        _stop_abandonable()
    finally:
        _restore_signals(saved)
    for signum in dict.fromkeys(_deferred):
        handler = signal.getsignal(signum)
        if handler in (signal.SIG_IGN, None) or handler is signal.default_int_handler:
            continue
        os.kill(os.getpid(), signum)
    _deferred.clear()


def _on_sigterm(signum: int, frame: Any) -> None:
    """Write ``session.end`` and the ZIP, send what is queued for OTLP, then die of SIGTERM."""
    import signal

    global _forwarding
    if _deadline is not None:  # a repeated signal before the deferring handler was installed
        _on_repeated_signal(signum, frame)
        return
    _defer_signals()
    _stop_abandonable()
    _forwarding = True
    _flush_forwarding()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _stop_abandonable() -> None:
    """Stop the session; a repeated signal past the grace period abandons the ZIP (see
    ``archive.abandon``), which leaves no temporary file."""
    try:
        stop_active()
    except BaseException as exc:
        archive = sys.modules.get(_ARCHIVE)
        if archive is None or not isinstance(exc, archive.ExportAbandoned):
            if not isinstance(exc, Exception):
                raise
            logger.warning("otel-agent-trace: stopping the session on exit failed: %s", exc)
    finally:
        archive = sys.modules.get(_ARCHIVE)
        if archive is not None:
            archive.discard_unfinished()


def _grace_ms() -> float:
    """``AGENT_TRACE_SIGNAL_GRACE_MS`` (the settings module reads it: a bad value is one clear line)."""
    from otel_agent_trace.settings import get_settings

    return float(get_settings().signal_grace_ms)


def _defer_signals() -> dict[int, Any]:
    """Start the grace period; route SIGINT and SIGTERM to :func:`_on_repeated_signal` (main thread
    only). Returns the handlers it replaced."""
    import signal

    global _deadline
    grace_ms = _grace_ms()
    _deadline = time.monotonic() + max(grace_ms, 0.0) / 1000.0
    saved: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return saved
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            handler = signal.getsignal(signum)
            if handler in (signal.SIG_IGN, None):
                continue  # ignored, or handled outside Python: left alone
            signal.signal(signum, _on_repeated_signal)
            saved[signum] = handler
        except (ValueError, OSError):
            pass
    return saved


def _restore_signals(saved: dict[int, Any]) -> None:
    import signal

    global _deadline
    for signum, handler in saved.items():
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):
            pass
    _deadline = None


def _on_repeated_signal(signum: int, frame: Any) -> None:
    """A SIGINT or SIGTERM while the session is being stopped: deferred within the grace period;
    after it, the ZIP is abandoned (and, once only forwarding is left, the process dies now)."""
    import signal

    _deferred.append(signum)
    if _deadline is not None and time.monotonic() < _deadline:
        report_once(
            "signal-deferred",
            "otel-agent-trace: signal %d deferred while the session is stopped (ZIP being written); "
            "one %s ms after the first gives up the ZIP",
            signum,
            f"{_grace_ms():.0f}",
        )
        return
    if _forwarding:  # the ZIPs are written: stop waiting for the OTLP backend
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    archive = sys.modules.get(_ARCHIVE)
    if archive is not None:
        archive.abandon()  # may raise ExportAbandoned into the export it interrupts


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
