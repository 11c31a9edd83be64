"""Shared machinery of the system layer: whether to record, where, and how to patch.

Every hook starts with :func:`recorder`, which is one global read while no session records.
Recording is skipped for the recorder's own I/O (``own_io``), while OpenTelemetry
instrumentation is suppressed (the SDK's export threads), and while the system layer itself
is at work on this thread (``busy``: nothing we do is recorded as the agent's).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import in_own_io, report_once
from otel_agent_trace.settings import get_settings

_tl = threading.local()
_get_value = otel_context.get_value
_current_span = trace.get_current_span
_POSIX = os.sep == "/"
_OS_SUPPORT_SETS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids")


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
        return None
    return rec


def emit(rec: Any, name: str, attributes: dict[str, Any]) -> None:
    """One instant system event on the current span, written to the session now."""
    span = _current_span()
    if not span.is_recording():
        return
    _tl.busy = True
    try:
        rec.record_event(span, name, attributes, sys_layer=True)
    except Exception as exc:  # never raise into the agent
        report_once(
            f"system.emit:{type(exc).__name__}", "otel-agent-trace: recording %s failed: %r", name, exc
        )
    finally:
        _tl.busy = False


def flush(rec: Any) -> None:
    """Write what the session has queued now: the process is about to be replaced (``exec``)."""
    _tl.busy = True
    try:
        rec.flush()
    except Exception as exc:  # never raise into the agent
        report_once(f"system.flush:{type(exc).__name__}", "otel-agent-trace: flushing failed: %r", exc)
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


def replace_attr(
    owner: Any, name: str, make: Callable[[Any], Any], saved: dict[tuple[Any, str], Any]
) -> None:
    """Replace ``owner.name`` by ``make(original)``; ``saved`` remembers the original to restore.

    One original gets one wrapper wherever it is (``builtins.open`` is ``io.open``): identity
    checks and pickling by name keep working."""
    original = getattr(owner, name, None)
    if original is None or (owner, name) in saved:
        return
    for (other_owner, other_name), other in saved.items():
        if other is original:
            wrapper = getattr(other_owner, other_name)
            saved[(owner, name)] = original
            setattr(owner, name, wrapper)
            return
    wrapper = make(original)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(original, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = original
    saved[(owner, name)] = original
    setattr(owner, name, wrapper)
    if owner is os:  # keep `os.open in os.supports_dir_fd` style checks true
        for group in _OS_SUPPORT_SETS:
            members = getattr(os, group, None)
            if isinstance(members, set) and original in members:
                members.add(wrapper)


def restore_all(saved: dict[tuple[Any, str], Any]) -> None:
    for (owner, name), original in list(saved.items()):
        current = getattr(owner, name, None)
        if getattr(current, "__wrapped__", None) is original:
            setattr(owner, name, original)
            if owner is os:
                for group in _OS_SUPPORT_SETS:
                    members = getattr(os, group, None)
                    if isinstance(members, set):
                        members.discard(current)
        del saved[(owner, name)]
