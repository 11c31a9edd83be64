"""``agent_trace``: the one instrumentor ``opentelemetry-instrument`` loads, running every part.

Each part is a ``BaseInstrumentor`` of its own (``OpenAIInstrumentor``, ``FilesInstrumentor``, …),
usable alone. They are offered under one entry point because ``opentelemetry-instrument`` reads
and parses a package's metadata twice per entry point at every start of every Python process —
with thirteen entry points that was 4% of the start-up of every child Python process of an agent.

Parts keep their names for ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS``: ``agent_trace_files``
switches the file hooks off as before; ``agent_trace`` switches everything off. A part is
imported only when enabled, and a library's part (:data:`WAITS_FOR`) only when the agent imports
that library: a process that never imports CrewAI never loads or instruments the CrewAI part
(importing and instrumenting all of them at start was 2% of every Python process's start-up).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Collection
from typing import Any

import wrapt
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


# a library's part → the module it waits for (its ``DeferredInstrumentor.library_module``; a test
# keeps the two equal): the part is loaded when that module is imported, not at start-up. Not the
# LiteLLM part: in a model replay it must set LITELLM_LOCAL_MODEL_COST_MAP before LiteLLM is
# imported (LiteLLM fetches its price list from GitHub as it is imported), so it starts at once.
WAITS_FOR: dict[str, str] = {
    "agent_trace_openai": "openai",
    "agent_trace_anthropic": "anthropic",
    "agent_trace_bedrock": "botocore.client",
    "agent_trace_ollama": "ollama",
    "agent_trace_mistral": "mistralai.client.chat",
    "agent_trace_groq": "groq.resources.chat.completions",
    "agent_trace_cohere": "cohere.v2.client",
    "agent_trace_google_genai": "google.genai.models",
    "agent_trace_langchain": "langchain_core",
    "agent_trace_strands": "strands",
    "agent_trace_langchain_tools": "langchain_core",
    "agent_trace_strands_tools": "strands",
    "agent_trace_mcp": "mcp",
    "agent_trace_openai_agents": "agents",
    "agent_trace_pydantic_ai": "pydantic_ai",
    "agent_trace_smolagents": "smolagents",
    "agent_trace_dspy": "dspy",
    "agent_trace_llamaindex": "llama_index.core",
    "agent_trace_autogen": "autogen_agentchat",
    "agent_trace_crewai": "crewai",
    "agent_trace_google_adk": "google.adk",
    "agent_trace_agno": "agno.agent",
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
    """Every part not disabled, each instrumented with the same arguments; a library's part once
    its library is imported (at once if it already is)."""

    _running: list[BaseInstrumentor] = []
    _waiting: set[str] = set()  # library parts wanted, their library not imported yet
    _hooked: set[str] = set()  # (a post-import hook cannot be removed: it checks _waiting)
    _kwargs: dict[str, Any] = {}

    def instrumentation_dependencies(self) -> Collection[str]:
        return ()  # each part checks its own library when that library is imported

    def _instrument(self, **kwargs: Any) -> None:
        cls = type(self)
        cls._kwargs = kwargs
        off = disabled_parts()
        for name in PARTS:
            if name in off:
                continue
            library = WAITS_FOR.get(name)
            if library is None or library in sys.modules:
                _start_part(name)
                continue
            cls._waiting.add(name)
            if name not in cls._hooked:
                cls._hooked.add(name)
                wrapt.register_post_import_hook(lambda _module, name=name: _on_library_import(name), library)
        if "agent_trace_http" not in off:
            try:
                _start_model_replay()
            except Exception as exc:  # (a session that cannot answer stops the program: SystemExit)
                internal_error("starting the model replay", exc)

    def _uninstrument(self, **kwargs: Any) -> None:
        cls = type(self)
        cls._waiting.clear()
        running, cls._running = cls._running, []
        for part in reversed(running):
            try:
                part.uninstrument(**kwargs)
            except Exception as exc:
                internal_error("uninstrumenting a part", exc)


def _on_library_import(name: str) -> None:
    """A library's part, started when the agent has imported the library (if still wanted)."""
    waiting = AgentTraceInstrumentor._waiting
    if name in waiting:
        waiting.discard(name)
        _start_part(name)


def _start_part(name: str) -> None:
    try:
        part = load_part(name)()
        part.instrument(skip_dep_check=True, **AgentTraceInstrumentor._kwargs)
    except Exception as exc:  # one part failing must not stop the others, nor the agent
        internal_error(f"instrumenting {name}", exc)
        return
    AgentTraceInstrumentor._running.append(part)


def _start_model_replay() -> None:
    """The model replay ``AGENT_TRACE_MODEL_REPLAY`` asks for, started once the parts run (its
    requests are answered by the HTTP part's hooks): the one place capture code imports
    :mod:`otel_agent_trace.model_replay` (tests/contracts/test_import_graph.py)."""
    from otel_agent_trace.settings import get_settings

    if get_settings().model_replay is not None:
        from otel_agent_trace.model_replay import start_from_settings

        start_from_settings()
