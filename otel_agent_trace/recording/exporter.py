"""``agent_session``: the exporter name for ``OTEL_TRACES_EXPORTER``.

Under our configurator it becomes the synchronous :class:`SessionSpanProcessor` (entries written as
spans start and end). Under another configurator, which wraps every exporter in a
``BatchSpanProcessor``, it still writes the session: a ``span.end`` entry per finished span, in
batches (spans still running at a crash, and the last batch, are then not on disk).
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.settings import Settings, get_settings

from .lifecycle import active_recorder, auto_start, install_exit_handlers, stop_active
from .processor import SessionSpanProcessor


class AgentSessionSpanExporter(SpanExporter):
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if SessionSpanProcessor.instances:
            return SpanExportResult.SUCCESS  # a session processor records these already
        try:
            if sink.active() is None and self.settings.auto_session and self.settings.record:
                install_exit_handlers()
                auto_start()
            rec = active_recorder()
            if rec is None:
                return SpanExportResult.SUCCESS
            for span in spans:
                rec.on_span_start(span)
                rec.on_span_end(span)
            return SpanExportResult.SUCCESS
        except Exception as exc:
            internal_error("writing spans", exc)
            return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        stop_active()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
