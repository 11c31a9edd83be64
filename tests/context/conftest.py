"""Context propagation runs with our instrumentor, with and without the OpenTelemetry threading
instrumentation beside it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.instrumentation.threading import ThreadingInstrumentor

from otel_agent_trace.instrumentation.context import ContextInstrumentor


@pytest.fixture
def context_instrumented(provider) -> Iterator[ContextInstrumentor]:
    inst = ContextInstrumentor()
    inst.instrument()
    yield inst
    inst.uninstrument()


@pytest.fixture(params=["ours-only", "with-otel-threading"])
def threads_instrumented(request, context_instrumented) -> Iterator[str]:
    upstream = ThreadingInstrumentor()
    if request.param == "with-otel-threading":
        upstream.instrument()
    yield request.param
    if upstream.is_instrumented_by_opentelemetry:
        upstream.uninstrument()
