"""The bridge from capture code to the active session recorder.

Capture code (instrumentations, the public API) never imports the exporter; it asks this module
for the active recorder, which the exporter registers. ``active()`` is ``None`` when nothing is
recording, which is how the system layer knows to do nothing at all.
"""

from __future__ import annotations

from typing import Any, Protocol

from otel_agent_trace._internal.guard import internal_error


class Recorder(Protocol):
    """What capture code and the span processor use of the active recorder (a
    ``recording.recorder.SessionRecorder``)."""

    session_id: str

    def on_span_start(self, span: Any) -> None: ...

    def on_span_end(self, span: Any) -> None: ...

    def attach_content(self, span: Any, content: dict[str, Any]) -> None: ...

    def record_event(
        self, span: Any, name: str, attributes: dict[str, Any] | None = None, *, sys_layer: bool = False
    ) -> bool: ...

    def record_message(self, role: str, content: Any, span: Any = None, **extra: Any) -> str | None: ...

    def snapshot(
        self,
        description: str = "",
        *,
        messages: list[Any] | None = None,
        system_prompt: str | None = None,
        state: dict[str, Any] | None = None,
        last_query: Any = None,
        last_result: Any = None,
        model_info: dict[str, Any] | None = None,
        tools_loaded: list[str] | None = None,
        span: Any = None,
        auto: bool = False,
        span_messages: tuple[list[Any], list[Any]] | None = None,
    ) -> int: ...

    def parent_entries(self, span_id: int | None) -> dict[str, str]: ...

    def flush(self) -> None: ...

    def stop(self) -> list[str]: ...


_active: Recorder | None = None


def active() -> Recorder | None:
    """The recorder of the session being recorded now, or ``None``."""
    return _active


def set_active(recorder: Recorder | None) -> None:
    global _active
    _active = recorder
    if recorder is not None:
        for listener in tuple(_on_activate):
            try:
                listener(recorder)
            except Exception as exc:  # a listener must never stop a session from starting
                internal_error(f"session start listener {getattr(listener, '__qualname__', listener)}", exc)


# Called with the recorder each time a session becomes active (the system layer adds its audit
# hook on the first one, so a process that never records never pays for it).
_on_activate: list[Any] = []


def on_activate(listener: Any) -> None:
    if listener not in _on_activate:
        _on_activate.append(listener)


# A hook the exporter registers so capture code can start the automatic session lazily.
_autostart: Any = None


def set_autostart(factory: Any) -> None:
    global _autostart
    _autostart = factory


def ensure_active() -> Recorder | None:
    """The active recorder, starting the automatic session if one is configured."""
    if _active is None and _autostart is not None:
        _autostart()
    return _active
