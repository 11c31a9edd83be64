"""``agent_trace``: the one instrumentor ``opentelemetry-instrument`` loads, running every part.

Each part is a ``BaseInstrumentor`` of its own (``OpenAIInstrumentor``, ``FilesInstrumentor``, …),
usable alone. They are offered under one entry point because ``opentelemetry-instrument`` reads
and parses a package's metadata twice per entry point at every start of every Python process —
with thirteen entry points that was 4% of the start-up of every child Python process of an agent.

Parts keep their names for ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS``: ``agent_trace_files``
switches the file hooks off as before; ``agent_trace`` switches everything off. A part is
imported only when enabled.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from otel_agent_trace._internal.guard import internal_error

DISABLED_ENV = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"

# name → "module:class" under otel_agent_trace.instrumentation, in the order they are instrumented
# (the session processor first, then context propagation and the system layer, then libraries;
# libraries patch when the agent first imports them).
PARTS: dict[str, str] = {
    "agent_trace_core": "core:CoreInstrumentor",
    "agent_trace_context": "context:ContextInstrumentor",
    "agent_trace_files": "system.files:FilesInstrumentor",
    "agent_trace_processes": "system.processes:ProcessesInstrumentor",
    "agent_trace_http": "system.http:HTTPInstrumentor",
    "agent_trace_openai": "openai:OpenAIInstrumentor",
    "agent_trace_anthropic": "anthropic:AnthropicInstrumentor",
    "agent_trace_bedrock": "bedrock:BedrockInstrumentor",
    "agent_trace_ollama": "ollama:OllamaInstrumentor",
    "agent_trace_mistral": "mistral:MistralInstrumentor",
    "agent_trace_groq": "groq:GroqInstrumentor",
    "agent_trace_cohere": "cohere:CohereInstrumentor",
    "agent_trace_litellm": "litellm:LiteLLMInstrumentor",
    "agent_trace_google_genai": "google_genai:GoogleGenAIInstrumentor",
    "agent_trace_langchain": "langchain:LangChainInstrumentor",
    "agent_trace_strands": "strands:StrandsInstrumentor",
    "agent_trace_langchain_tools": "langchain_tools:LangChainToolsInstrumentor",
    "agent_trace_strands_tools": "strands_tools:StrandsToolsInstrumentor",
    "agent_trace_mcp": "mcp:MCPInstrumentor",
    "agent_trace_openai_agents": "openai_agents:OpenAIAgentsInstrumentor",
    "agent_trace_pydantic_ai": "pydantic_ai:PydanticAIInstrumentor",
    "agent_trace_smolagents": "smolagents:SmolagentsInstrumentor",
    "agent_trace_dspy": "dspy:DSPyInstrumentor",
    "agent_trace_llamaindex": "llamaindex:LlamaIndexInstrumentor",
    "agent_trace_autogen": "autogen:AutoGenInstrumentor",
    "agent_trace_crewai": "crewai:CrewAIInstrumentor",
    "agent_trace_google_adk": "google_adk:GoogleADKInstrumentor",
    "agent_trace_agno": "agno:AgnoInstrumentor",
}


def disabled_parts(env: Any = None) -> set[str]:
    """The part names listed in ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` (as the SDK reads it:
    comma-separated, spaces ignored)."""
    raw = (os.environ if env is None else env).get(DISABLED_ENV, "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def load_part(name: str) -> type[BaseInstrumentor]:
    module, _, cls = PARTS[name].partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)


class AgentTraceInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Every part not disabled, each instrumented with the same arguments."""

    _running: list[BaseInstrumentor] = []

    def instrumentation_dependencies(self) -> Collection[str]:
        return ()  # each part checks its own library when that library is imported

    def _instrument(self, **kwargs: Any) -> None:
        off = disabled_parts()
        for name in PARTS:
            if name in off:
                continue
            try:
                part = load_part(name)()
                part.instrument(skip_dep_check=True, **kwargs)
            except Exception as exc:  # one part failing must not stop the others, nor the agent
                internal_error(f"instrumenting {name}", exc)
                continue
            type(self)._running.append(part)
        if "agent_trace_http" not in off:
            try:
                _start_model_replay()
            except Exception as exc:  # (a session that cannot answer stops the program: SystemExit)
                internal_error("starting the model replay", exc)

    def _uninstrument(self, **kwargs: Any) -> None:
        running, type(self)._running = type(self)._running, []
        for part in reversed(running):
            try:
                part.uninstrument(**kwargs)
            except Exception as exc:
                internal_error("uninstrumenting a part", exc)


def _start_model_replay() -> None:
    """The model replay ``AGENT_TRACE_MODEL_REPLAY`` asks for, started once the parts run (its
    requests are answered by the HTTP part's hooks): the one place capture code imports
    :mod:`otel_agent_trace.model_replay` (tests/contracts/test_import_graph.py)."""
    from otel_agent_trace.settings import get_settings

    if get_settings().model_replay is not None:
        from otel_agent_trace.model_replay import start_from_settings

        start_from_settings()
