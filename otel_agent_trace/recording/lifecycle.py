"""The life of the process's session: start and stop, the automatic session on the first span,
normal exit, SIGTERM, and a forked child that goes on recording."""

from __future__ import annotations

import _thread
import atexit
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import internal_error, logger, report_once
from otel_agent_trace.settings import Settings, get_settings

if TYPE_CHECKING:
    from .recorder import SessionRecorder

# --- the process's automatic session -------------------------------------------------------

_auto_lock = threading.Lock()
_sigterm_installed = False
_ZIP_CONTAINER = __name__.rpartition(".")[0] + ".zip_container"


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
        # 1 instead of dying of SIGINT if an atexit callback runs exec() on a string (which an
        # import that defines a dataclass or a namedtuple does).
        from . import archive, zip_ahead  # noqa: F401

        # A big session's ZIP is copied as it grows.
        zip_ahead.watch(recorder.session_id, [tier.writer for tier in recorder.tiers])
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


# --- stopping on a signal (see docs/shutdown.md) --------------------------------------------
#
# What runs inside a signal handler interrupts whatever the main thread was doing, locks held
# included. So the handler for a signal that comes while the session is being stopped only notes
# it (two global assignments and a list append: no lock, no logging, no import), and the stop is
# bounded by a watchdog thread that no lock of ours can hold up: once the grace period after the
# first signal is over it removes the ZIP's temporary file and kills the process with that signal's
# default action (reset in C, so no Python code of the main thread has to run for it).

_POLL_S = 0.05

_stopping = False  # a stop at exit or on SIGTERM is under way: signals are only noted
_signalled = 0  # the first signal noted (the process dies of it)
_signalled_at = 0.0  # time.monotonic() when it came
_noted: list[int] = []  # every signal noted, in order


def _note_signal(signum: int, frame: Any) -> None:
    """The handler of SIGINT and SIGTERM while the session is stopped: remember, nothing else."""
    global _signalled, _signalled_at
    if not _signalled:
        _signalled_at = time.monotonic()
        _signalled = signum
    _noted.append(signum)


def _on_sigterm(signum: int, frame: Any) -> None:
    """Write ``session.end`` and the ZIP, send what is queued for OTLP, then die of SIGTERM."""
    global _stopping
    if _stopping:  # a repeated SIGTERM before the noting handler was in place
        _note_signal(signum, frame)
        return
    _stopping = True
    try:  # whatever happens here (a Ctrl-C before SIGINT is deferred), the process dies of signum
        _note_signal(signum, frame)
        _defer_signals({})
        watchdog = _start_watchdog()
        try:
            _stop_quietly()
            _flush_forwarding()
        finally:
            _end_watchdog(watchdog)
    finally:
        _die_of(signum)


def _stop_at_exit() -> None:
    """atexit (normal exit, an unhandled Ctrl-C, ``sys.exit``): stop the session with SIGINT and
    SIGTERM only noted. A SIGTERM that came meanwhile is then acted on (the process dies of it); a
    repeated Ctrl-C is not (the process is exiting already)."""
    global _stopping
    if _stopping or active_recorder() is None:  # (nothing to stop: no thread started at exit)
        return
    saved: dict[int, Any] = {}
    _stopping = True
    while True:
        try:
            _defer_signals(saved)
            break
        except KeyboardInterrupt:  # a Ctrl-C before the noting handler was in place
            _note_signal(signal.SIGINT, None)
    watchdog = _start_watchdog()
    try:
        _stop_quietly()
    finally:
        _end_watchdog(watchdog)
        _restore_signals(saved)
        _stopping = False
    if signal.SIGTERM in _noted:
        handler = signal.getsignal(signal.SIGTERM)
        if handler in (signal.SIG_DFL, _on_sigterm):
            _die_of(signal.SIGTERM)
        elif callable(handler):
            os.kill(os.getpid(), signal.SIGTERM)  # the application's own handler


def _stop_quietly() -> None:
    try:
        recorder = active_recorder()
        stop_active()
        if recorder is not None:
            _say_where(recorder)
    except Exception as exc:  # pragma: no cover - best effort on the way out
        logger.warning("otel-agent-trace: stopping the session on exit failed: %s", exc)


def _say_where(recorder: SessionRecorder) -> None:
    """One line on stderr at exit, as a test runner names its report: the session's file and
    what to run next (``AGENT_TRACE_SUMMARY``: auto — when stderr is a terminal —, true, false).
    Not from a child process: its file joins its parent's session."""
    mode = recorder.settings.summary
    if mode == "false" or recorder.is_child or not recorder.files:
        return
    if mode == "auto" and not (sys.stderr is not None and sys.stderr.isatty()):
        return
    path = str(recorder.files[0])
    try:
        shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    except ValueError:  # another drive
        shown = path
    more = f" (+{len(recorder.files) - 1} more)" if len(recorder.files) > 1 else ""
    print(
        f"otel-agent-trace: session recorded in {shown}{more}; look at it: otel-agent-trace view {shown}",
        file=sys.stderr,
        flush=True,
    )


def _defer_signals(saved: dict[int, Any]) -> None:
    """Route SIGINT and SIGTERM to :func:`_note_signal` (main thread only), keeping in ``saved``
    the handlers replaced. Handlers outside Python and ignored signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signum in saved:
            continue
        try:
            handler = signal.getsignal(signum)
            if handler in (signal.SIG_IGN, None, _note_signal):
                continue
            signal.signal(signum, _note_signal)
            saved[signum] = handler
        except (ValueError, OSError):
            pass


def _restore_signals(saved: dict[int, Any]) -> None:
    for signum, handler in saved.items():
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):
            pass


def _grace_seconds() -> float:
    """``AGENT_TRACE_SIGNAL_GRACE_MS``: the running session's setting (else the process's)."""
    recorder = sink.active()
    settings = getattr(recorder, "settings", None) or get_settings()
    return settings.signal_grace_ms / 1000.0


def _start_watchdog() -> tuple[Any, Any]:
    """Start the thread that ends the process once the grace period after the first signal is
    over. Returns the locks to hand to :func:`_end_watchdog` when the stop is done. (``_thread``,
    not ``threading``: starting it takes no lock the interrupted main thread may hold.)"""
    done = _thread.allocate_lock()
    done.acquire()
    left = _thread.allocate_lock()
    left.acquire()
    try:
        _thread.start_new_thread(_watch, (done, left, _grace_seconds()))
    except RuntimeError:  # pragma: no cover - no thread can be started: no deadline then
        left.release()
    return done, left


def _end_watchdog(watchdog: tuple[Any, Any]) -> None:
    """The stop is done: the watchdog returns, and is waited for (briefly). A thread still
    starting while the interpreter finalizes can crash CPython 3.11 (seen as SIGSEGV in
    ``_PyThreadState_SetCurrent`` on 3.11.2), so the process goes on only once it has left."""
    done, left = watchdog
    done.release()
    left.acquire(timeout=_LEAVE_S)


# How long the end of a stop waits for the watchdog to return (it polls every _POLL_S).
_LEAVE_S = 2.0


def _watch(done: Any, left: Any, grace: float) -> None:
    try:
        while not done.acquire(timeout=_POLL_S):
            if _signalled and time.monotonic() >= _signalled_at + grace:
                break
        else:
            return
    finally:
        left.release()
    container = sys.modules.get(_ZIP_CONTAINER)
    if container is not None:
        container.discard_unfinished()
    signum = _signalled
    try:  # (only now: a stop that ends in time costs no import)
        import ctypes
    except ImportError:  # pragma: no cover
        ctypes = None  # type: ignore[assignment]
    if ctypes is not None:
        try:  # the default action, set in C: the main thread need not run to die of it
            libc = ctypes.CDLL(None)
            libc.signal.restype = ctypes.c_void_p
            libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
            libc.signal(signum, None)  # SIG_DFL
            os.kill(os.getpid(), signum)
            time.sleep(1.0)
        except Exception:  # pragma: no cover
            pass
    os._exit(128 + signum)  # pragma: no cover - no C library to reset the signal with


def _die_of(signum: int) -> None:
    """End the process by ``signum``'s default action, as it would have ended without us."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


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
    global _auto_lock, _stopping, _signalled
    _auto_lock = threading.Lock()
    _stopping, _signalled = False, 0
    _noted.clear()
    _default_sigterm_in_child()
    rec = active_recorder()
    if rec is not None and rec.active:
        _leave_inherited_spans_to_the_parent()
        try:
            rec._continue_in_forked_child()
        except Exception as exc:
            sink.set_active(None)  # record nothing rather than corrupt the parent's file
            report_once("fork", "otel-agent-trace: cannot record in the forked process: %s", exc)


_forked_ns = 0  # when this process was forked (0: not a forked child)


def _leave_inherited_spans_to_the_parent() -> None:
    """In a forked child, spans the parent started (the agent or tool span the child was forked
    under, open in the child's copy of memory) are the parent's to end. A child that unwinds them
    (``sys.exit`` through a ``with`` block) would otherwise end them a second time: a ``span.end``
    (with the ``SystemExit``) in the child's file and a second copy sent to the OTLP backend. From
    the fork on, ``end()`` of a span that started before the fork does nothing in the child (a
    span started by the child starts after the fork)."""
    global _forked_ns
    _forked_ns = time.time_ns()
    from opentelemetry.sdk.trace import Span

    if getattr(Span.end, "_agent_trace_forked", False):
        return
    original = Span.end

    def end(self: Any, end_time: int | None = None) -> None:
        start = self._start_time
        if start is not None and start < _forked_ns:
            return  # the parent's span: the parent ends it
        original(self, end_time)

    end._agent_trace_forked = True  # type: ignore[attr-defined]
    end.__wrapped__ = original  # type: ignore[attr-defined]
    Span.end = end  # type: ignore[method-assign]


def _default_sigterm_in_child() -> None:
    """A process forked without exec (a multiprocessing worker) dies of SIGTERM as it would
    without us. With a Python handler, a SIGTERM that lands just before the worker blocks in a C
    call (waiting on its task queue) is never acted on, and ``Pool.terminate()`` then waits for
    it forever. Its entries are on disk already; only its ``session.end`` is left out."""
    try:
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread of the child: nothing we can do
        pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
