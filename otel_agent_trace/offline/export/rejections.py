"""What OTLP receivers said in ``partial_success``: read by both protocols' senders."""

from __future__ import annotations

from typing import Any


class Rejections:
    """What receivers said in ``partial_success``: spans rejected, and their messages (each once)."""

    def __init__(self) -> None:
        self.spans = 0
        self.messages: list[str] = []

    def add(self, response: Any) -> None:
        """Count the ``partial_success`` of one ``ExportTraceServiceResponse``."""
        if not response.HasField("partial_success"):
            return
        partial = response.partial_success
        self.spans += max(partial.rejected_spans, 0)
        message = partial.error_message.strip()
        if message and message not in self.messages and len(self.messages) < 10:
            self.messages.append(message)

    def add_body(self, body: bytes) -> None:
        """Count an HTTP answer's body (an ``ExportTraceServiceResponse``; anything else is ignored)."""
        if not body:
            return
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        try:
            self.add(ExportTraceServiceResponse.FromString(body))
        except DecodeError:
            pass  # not protobuf (a proxy's page, JSON): no partial success to read
