"""A model call inside another package's model span (a framework's own ``chat`` span, as Google ADK
and Pydantic AI make): no second span is made; the call's results that span lacks are filled in,
the ones it has keep its values, and a span the package ended before the call finished is left
alone. Real OpenAI client against the local server, a real SDK span of another tracer."""

from __future__ import annotations

import logging
from typing import Any

from opentelemetry.trace import SpanKind

USER = [{"role": "user", "content": "Hi there"}]
FOREIGN = "framework.own"


def _framework_span(provider: Any, **attributes: Any) -> Any:
    """A framework's own model span, as it starts it (its request attributes only)."""
    tracer = provider.get_tracer(FOREIGN)
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", **attributes}
    return tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=attrs)


def test_the_framework_span_gets_the_results_it_lacks_and_keeps_its_own(
    openai_instrumentor, provider, openai_client, memory_exporter
):
    openai_instrumentor.instrument(tracer_provider=provider)
    with _framework_span(provider, **{"gen_ai.response.id": "framework-id", "gen_ai.usage.input_tokens": 7}):
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    spans = [s for s in memory_exporter.get_finished_spans() if not s.name.startswith(("POST", "GET"))]
    (span,) = spans  # the framework's, no second one
    assert span.instrumentation_scope.name == FOREIGN
    attrs = span.attributes
    assert attrs["gen_ai.response.id"] == "framework-id"  # its own values stay
    assert attrs["gen_ai.usage.input_tokens"] == 7
    assert attrs["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"  # the ones it lacked: the call's
    assert attrs["gen_ai.response.finish_reasons"] == ("stop",)
    assert attrs["gen_ai.usage.output_tokens"] == 9
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 4


def test_a_stream_read_after_the_framework_span_ended_leaves_that_span_alone(
    openai_instrumentor, provider, openai_client, memory_exporter, caplog
):
    openai_instrumentor.instrument(tracer_provider=provider)
    with _framework_span(provider):
        stream = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER, stream=True)
    with caplog.at_level(logging.WARNING, logger="opentelemetry"):
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Hello! How can I help you today?"
    (span,) = [s for s in memory_exporter.get_finished_spans() if not s.name.startswith(("POST", "GET"))]
    assert "gen_ai.response.id" not in span.attributes  # ended before the stream was read: as it ended
    assert not [r for r in caplog.records if "ended span" in r.getMessage()]
