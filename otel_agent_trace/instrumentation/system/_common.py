"""Shared machinery of the system layer: whether to record, and where.

Every hook starts with :func:`recorder`, which is one global read while no session records.
Recording is skipped for the recorder's own I/O (``own_io``), while OpenTelemetry
instrumentation is suppressed (the SDK's export threads), and while the system layer itself
is at work on this thread (``busy``: nothing we do is recorded as the agent's).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import in_own_io, internal_error
from otel_agent_trace.settings import get_settings

_tl = threading.local()
_get_value = otel_context.get_value
_current_span = trace.get_current_span
_POSIX = os.sep == "/"


class _State:
    """Per-session facts computed once when a session becomes active."""

    excluded: tuple[str, ...] = ("\0",)  # path prefixes never recorded (the sessions directory)
    cwd: str = ""
    enabled: bool = True  # the session's AGENT_TRACE_SYSTEM_LAYER


state = _State()


def recorder() -> Any:
    """The active recorder if this moment may be recorded, else ``None``."""
    rec = sink._active
    if rec is None or not state.enabled:
        return None
    if getattr(_tl, "busy", False) or in_own_io() or _get_value(_SUPPRESS_INSTRUMENTATION_KEY):
        return None  # (what :func:`ours` says, inline: every open() of the agent asks)
    return rec


def ours() -> bool:
    """Whether what happens now is ours or the SDK's, never the agent's: the recorder's own I/O,
    the system layer at work on this thread, or instrumentation suppressed (the SDK's exports)."""
    return bool(getattr(_tl, "busy", False) or in_own_io() or _get_value(_SUPPRESS_INSTRUMENTATION_KEY))


def emit(rec: Any, name: str, attributes: dict[str, Any]) -> None:
    """One instant system event on the current span, written to the session now."""
    span = _current_span()
    if not span.is_recording():
        return
    _tl.busy = True
    try:
        rec.record_event(span, name, attributes, sys_layer=True)
    except Exception as exc:  # never raise into the agent
        internal_error(f"recording {name}", exc)
    finally:
        _tl.busy = False


def flush(rec: Any) -> None:
    """Write what the session has queued now: the process is about to be replaced (``exec``)."""
    _tl.busy = True
    try:
        rec.flush()
    except Exception as exc:  # never raise into the agent
        internal_error("flushing the session", exc)
    finally:
        _tl.busy = False


def on_session(rec: Any) -> None:
    """Sink listener: remember where this session writes (never recorded) and the cwd."""
    directory = getattr(rec, "directory", None)
    prefixes: list[str] = []
    if directory is not None:
        raw = os.fspath(directory)
        for form in (raw, os.path.abspath(raw), os.path.realpath(raw)):
            form = form.rstrip(os.sep) + os.sep
            if form not in prefixes and form != os.sep:
                prefixes.append(form)
    state.excluded = tuple(prefixes) or ("\0",)
    settings = getattr(rec, "settings", None) or get_settings()
    state.enabled = bool(getattr(settings, "system_layer", True))
    refresh_cwd()


def refresh_cwd() -> str:
    try:
        state.cwd = os.getcwd()
    except OSError:
        state.cwd = ""
    return state.cwd


def fs_path(path: Any) -> str | None:
    """A path argument as an absolute ``str`` (``None`` for file descriptors and oddities)."""
    if isinstance(path, str):
        text = path
    elif isinstance(path, bytes):
        text = os.fsdecode(path)
    elif isinstance(path, int):
        return None
    else:
        try:
            text = os.fspath(path)
        except TypeError:
            return None
        if isinstance(text, bytes):
            text = os.fsdecode(text)
    if not (text.startswith("/") if _POSIX else os.path.isabs(text)):
        cwd = state.cwd or refresh_cwd()
        if cwd:
            text = os.path.join(cwd, text)
    return text


def excluded(path: str) -> bool:
    """Paths inside the sessions directory are the recorder's business, never the agent's."""
    return path.startswith(state.excluded) or path + os.sep in state.excluded
