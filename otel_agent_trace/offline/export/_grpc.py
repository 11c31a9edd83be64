"""The SDK's OTLP/gRPC span exporter, its answers read for ``partial_success``.

The exporter drops the ``ExportTraceServiceResponse`` its stub returns; here the stub it makes
(on start, and again when it reconnects after ``UNAVAILABLE``) is wrapped so each answer is
counted first. That hook (``_initialize_channel_and_stub``) is the exporter's own, not public:
``tests/export/test_export_receivers.py`` fails if a new version of the exporter stops calling it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from .rejections import Rejections


class _CountingStub:
    """A ``TraceServiceStub`` whose ``Export`` answers are counted in ``rejections``."""

    def __init__(self, stub: Any, rejections: Rejections) -> None:
        self._stub = stub
        self._rejections = rejections

    def Export(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (the stub's name)
        response = self._stub.Export(*args, **kwargs)
        self._rejections.add(response)
        return response


class _CountingExporter(OTLPSpanExporter):
    def __init__(self, rejections: Rejections, **kwargs: Any) -> None:
        self._rejections = rejections  # before the exporter makes its first stub
        super().__init__(**kwargs)

    def _initialize_channel_and_stub(self) -> None:
        super()._initialize_channel_and_stub()
        self._client = _CountingStub(self._client, self._rejections)


def counting_exporter(
    endpoint: str, headers: Sequence[tuple[str, str]] | None, timeout: float, rejections: Rejections
) -> OTLPSpanExporter:
    """The gRPC span exporter for ``endpoint``; each receiver's ``partial_success`` counted."""
    return _CountingExporter(rejections, endpoint=endpoint, headers=headers, timeout=timeout)
