"""The one PEP 578 audit hook of the system layer.

An audit hook sees what no patch can name (C-level opens, ``io.FileIO``, functions captured
before we patched, ``socket.connect``), but it cannot be removed once added. So it is added only
when a session first becomes active (a process that never records never pays for it), it does
nothing but one global read while no session records, and instrumentors turn their events on and
off in :data:`handlers` (an uninstrumented event name is simply absent).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _common

Handler = Callable[[Any, tuple[Any, ...]], None]

# audit event name -> handler(recorder, args); edited only by the instrumentors.
handlers: dict[str, Handler] = {}
_installed = False
_lock = threading.Lock()


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if sink._active is None:
        return
    handler = handlers.get(event)
    if handler is None:
        return
    rec = _common.recorder()
    if rec is None:
        return
    try:
        handler(rec, args)
    except Exception as exc:  # an audit hook that raises would abort the audited operation
        internal_error(f"audit {event}", exc)


def _chdir(rec: Any, args: tuple[Any, ...]) -> None:
    # The hook runs before the change: forget the cached cwd; the next relative path reads it.
    _common.state.cwd = ""


def ensure_installed(rec: Any = None) -> None:
    """Add the audit hook (once per process). A sink ``on_activate`` listener."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        _installed = True
        sys.addaudithook(_hook)


def listen(own: dict[str, Handler]) -> None:
    """An instrumentor's audit handlers, active from now on (with the session-start hooks)."""
    handlers.update(own)
    start_listening()


def stop_listening(own: dict[str, Handler]) -> None:
    """Remove an instrumentor's handlers (the hook itself cannot be removed: it then does nothing)."""
    for event, handler in own.items():
        if handlers.get(event) is handler:
            del handlers[event]


def start_listening() -> None:
    """Called by every system instrumentor: hook the session start (and the current session)."""
    sink.on_activate(_common.on_session)
    sink.on_activate(ensure_installed)
    handlers.setdefault("os.chdir", _chdir)
    current = sink._active
    if current is not None:
        _common.on_session(current)
        ensure_installed()
