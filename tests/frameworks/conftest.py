"""Fixtures for whole-framework runs: the replay server, our model, framework, tool and context
instrumentors switched on for these tests (and off afterwards), and a started session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import otel_agent_trace as oat
from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture(scope="package", autouse=True)
def instrumented(provider: Any) -> Iterator[None]:
    from otel_agent_trace.instrumentation.agno import AgnoInstrumentor
    from otel_agent_trace.instrumentation.autogen import AutoGenInstrumentor
    from otel_agent_trace.instrumentation.context import ContextInstrumentor
    from otel_agent_trace.instrumentation.crewai import CrewAIInstrumentor
    from otel_agent_trace.instrumentation.google_adk import GoogleADKInstrumentor
    from otel_agent_trace.instrumentation.langchain import LangChainInstrumentor
    from otel_agent_trace.instrumentation.langchain_tools import LangChainToolsInstrumentor
    from otel_agent_trace.instrumentation.llamaindex import LlamaIndexInstrumentor
    from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor
    from otel_agent_trace.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from otel_agent_trace.instrumentation.pydantic_ai import PydanticAIInstrumentor
    from otel_agent_trace.instrumentation.smolagents import SmolagentsInstrumentor
    from otel_agent_trace.instrumentation.strands import StrandsInstrumentor
    from otel_agent_trace.instrumentation.strands_tools import StrandsToolsInstrumentor

    instrumentors = [
        ContextInstrumentor(),
        OpenAIInstrumentor(),
        OpenAIAgentsInstrumentor(),
        LangChainInstrumentor(),
        LangChainToolsInstrumentor(),
        StrandsInstrumentor(),
        StrandsToolsInstrumentor(),
        PydanticAIInstrumentor(),
        SmolagentsInstrumentor(),
        AgnoInstrumentor(),
        LlamaIndexInstrumentor(),
        AutoGenInstrumentor(),
        CrewAIInstrumentor(),
        GoogleADKInstrumentor(),
    ]
    mine = [inst for inst in instrumentors if not inst.is_instrumented_by_opentelemetry]
    for inst in mine:
        inst.instrument(tracer_provider=provider)
    yield
    for inst in reversed(mine):
        inst.uninstrument()


@pytest.fixture(scope="package", autouse=True)
def _no_agents_sdk_export() -> Iterator[None]:
    """The OpenAI Agents SDK's own tracing off (it would export to the vendor), except where a
    test collects it (``sdk_traces``)."""
    try:
        import agents
        from agents.tracing.setup import get_trace_provider
    except ImportError:
        yield
        return
    provider = get_trace_provider()
    before = getattr(provider, "_manual_disabled", None)
    agents.set_tracing_disabled(True)
    yield
    provider._manual_disabled = before


@pytest.fixture(scope="package")
def _server() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm(_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The replay server, with an empty script and request log."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
def checkpoint(session_dir: Path, provider: Any) -> Iterator[oat.Session]:
    """A started session keeping both tiers."""
    s = oat.session("frameworks", directory=session_dir, tier="both").start()
    yield s
    s.stop()
