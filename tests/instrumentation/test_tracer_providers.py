"""Each instrumentor makes its spans from the ``tracer_provider`` it was given, and forgets it
when uninstrumented."""

from __future__ import annotations

import subprocess
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent_trace as oat

USER = [{"role": "user", "content": "Hi there"}]


def provider_with_memory() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def names(exporter: InMemorySpanExporter) -> list[str]:
    return [s.name for s in exporter.get_finished_spans()]


def call_both(openai_client: Any, anthropic_client: Any) -> None:
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    anthropic_client.messages.create(model="claude-test", max_tokens=50, messages=USER)


def test_two_instrumentors_two_providers_never_mixed(
    openai_instrumentor, anthropic_instrumentor, openai_client, anthropic_client, memory_exporter
):
    for_openai, openai_spans = provider_with_memory()
    for_anthropic, anthropic_spans = provider_with_memory()
    openai_instrumentor.instrument(tracer_provider=for_openai)
    anthropic_instrumentor.instrument(tracer_provider=for_anthropic)  # the last one given: no matter
    call_both(openai_client, anthropic_client)
    assert names(openai_spans) == ["chat gpt-4o-mini"]
    assert names(anthropic_spans) == ["chat claude-test"]
    assert [n for n in names(memory_exporter) if n.startswith("chat")] == []  # nothing to the global one


def test_uninstrument_forgets_the_provider(
    openai_instrumentor, anthropic_instrumentor, openai_client, anthropic_client, memory_exporter
):
    given, given_spans = provider_with_memory()
    openai_instrumentor.instrument(tracer_provider=given)
    anthropic_instrumentor.instrument(tracer_provider=given)
    openai_instrumentor.uninstrument()
    anthropic_instrumentor.uninstrument()
    openai_instrumentor.instrument()  # no provider: the global one
    anthropic_instrumentor.instrument()
    call_both(openai_client, anthropic_client)
    assert names(given_spans) == []
    assert sorted(n for n in names(memory_exporter) if n.startswith("chat")) == [
        "chat claude-test",
        "chat gpt-4o-mini",
    ]


def test_a_system_instrumentor_uses_its_provider_too(processes_instrumentor, recording, memory_exporter):
    given, given_spans = provider_with_memory()
    processes_instrumentor.instrument(tracer_provider=given)
    with oat.tool("shell"):
        subprocess.run(["true"])
    assert names(given_spans) == ["process true"]
    assert "process true" not in names(memory_exporter)


def test_a_tool_instrumentor_uses_its_provider_too(provider, recording, memory_exporter):
    from langchain_core.tools import tool

    from otel_agent_trace.instrumentation.langchain_tools import LangChainToolsInstrumentor

    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    instrumentor = LangChainToolsInstrumentor()
    instrumentor.uninstrument()
    given, given_spans = provider_with_memory()
    instrumentor.instrument(tracer_provider=given)
    try:
        assert shout.invoke({"text": "hi"}) == "HI"
    finally:
        instrumentor.uninstrument()
        instrumentor.instrument()
    assert names(given_spans) == ["execute_tool shout"]
    assert "execute_tool shout" not in names(memory_exporter)
