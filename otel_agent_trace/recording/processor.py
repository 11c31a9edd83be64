"""The span processor that writes the session tree as spans start and end."""

from __future__ import annotations

from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_agent_trace import semconv
from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.settings import Settings, get_settings

from .lifecycle import active_recorder, auto_start, install_exit_handlers, stop_active

# The session's id on a span that is starting (~2 µs cheaper than ``set_attribute``).
_tag = sdk_compat.tag_starting_span
_OURS, _SHARED = semconv.AGENT_TRACE_SESSION_ID, semconv.SESSION_ID


class _NotLoaded:
    """Stands for the recorder class until a session exists (the recorder module is not loaded at
    start-up): no active recorder is ever of this type."""


# The type of the active recorder, checked on every span; the real class once a session started.
SessionRecorder: type = _NotLoaded


class SessionSpanProcessor(SpanProcessor):
    """Records spans into the active session (started on the first span when ``auto_session``):
    a span's end, events and content are in the file when ``end()`` returns; its start within
    ``flush_ms`` while it runs (see ``SessionRecorder``).

    Every span gets ``agent_trace.session.id`` (always the session's id: the key to search a
    backend by) and ``session.id`` (the same, unless the agent or its framework set its own —
    a host's attribute is never replaced).
    """

    instances = 0

    def __init__(self, settings: Settings | None = None, *, auto_session: bool | None = None):
        type(self).instances += 1
        self.settings = settings or get_settings()
        self._auto = self.settings.record and (
            self.settings.auto_session if auto_session is None else auto_session
        )
        if self._auto:
            sink.set_autostart(auto_start)
            install_exit_handlers()

    def _recorder(self) -> Any:
        global SessionRecorder
        rec = active_recorder()
        if rec is None and self._auto:
            auto_start()
            rec = active_recorder()
        if rec is not None:
            SessionRecorder = type(rec)
        return rec

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            rec: Any = sink._active  # the module global itself: this runs for every span
            if type(rec) is not SessionRecorder:
                rec = self._recorder()
                if rec is None:
                    return
            _tag(span, _OURS, _SHARED, rec.session_id)
            rec.on_span_start(span)
        except Exception as exc:  # never raise into the code that started the span
            internal_error("recording a span start", exc)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            rec: Any = sink._active
            if type(rec) is SessionRecorder or active_recorder() is not None:
                rec.on_span_end(span)
        except Exception as exc:
            internal_error("recording a span end", exc)

    def shutdown(self) -> None:
        try:
            stop_active()
        except Exception as exc:
            internal_error("stopping the session", exc)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every entry is already in the kernel when on_start/on_end return


def add_session_processor(provider: Any) -> bool:
    """Add a :class:`SessionSpanProcessor` to an SDK ``provider`` unless it has one. (An
    ``agent_session`` exporter that a foreign configurator batched then stands aside.)"""
    from opentelemetry.sdk.trace import TracerProvider

    if not isinstance(provider, TracerProvider) or not get_settings().record:
        return False
    if getattr(provider, "_agent_trace_recording", False):
        return False
    for proc in sdk_compat.span_processors(provider):
        if isinstance(proc, SessionSpanProcessor):
            _mark(provider)
            return False
    provider.add_span_processor(SessionSpanProcessor())
    _mark(provider)
    return True


def _mark(provider: Any) -> None:
    """Mark an SDK provider as one whose spans are recorded (an attribute of ours on its object)."""
    provider._agent_trace_recording = True
