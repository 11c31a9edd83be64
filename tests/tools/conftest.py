"""Tool instrumentations switched on for these tests (and off afterwards)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from otel_agent_trace.instrumentation.context import ContextInstrumentor
from otel_agent_trace.instrumentation.langchain_tools import LangChainToolsInstrumentor
from otel_agent_trace.instrumentation.mcp import MCPInstrumentor
from otel_agent_trace.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from otel_agent_trace.instrumentation.strands_tools import StrandsToolsInstrumentor

INSTRUMENTORS = (
    ContextInstrumentor,
    LangChainToolsInstrumentor,
    MCPInstrumentor,
    StrandsToolsInstrumentor,
    OpenAIAgentsInstrumentor,
)


@pytest.fixture(autouse=True)
def tools_instrumented(provider) -> Iterator[None]:
    started = []
    for cls in INSTRUMENTORS:
        inst = cls()
        if not inst.is_instrumented_by_opentelemetry:
            inst.instrument()
            started.append(inst)
    yield
    for inst in reversed(started):
        inst.uninstrument()
