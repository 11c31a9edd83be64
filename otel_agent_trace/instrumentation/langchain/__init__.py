"""LangChain chat models and LangGraph agent runs.

* ``BaseChatModel.invoke/ainvoke/stream/astream`` → ``chat {model}`` (CLIENT) spans;
* ``Pregel.stream/astream`` (so ``invoke``/``ainvoke`` of a compiled graph, e.g.
  ``create_react_agent``) → ``invoke_agent {graph name}`` spans.

Tools are recorded by ``agent_trace_langchain_tools``. ``opentelemetry-instrument`` loads this as
``agent_trace_langchain``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._genai.wrapping import Patches
from otel_agent_trace.instrumentation.langchain.package import _instruments

_CHAT = "langchain_core.language_models.chat_models"


class LangChainInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Chat-model spans and graph-run agent spans for LangChain / LangGraph."""

    library_module = "langchain_core"

    _patches = Patches("agent_trace_langchain")  # class-level: the instrumentor is a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation._genai.model_call import use_tracer_provider

        use_tracer_provider(kwargs.get("tracer_provider"))
        from otel_agent_trace.instrumentation.langchain import chat_models, graphs

        for method in ("invoke", "ainvoke", "stream", "astream"):
            self._patches.wrap(_CHAT, f"BaseChatModel.{method}", getattr(chat_models, method))
        for method in ("stream", "astream"):  # langgraph is optional
            self._patches.wrap("langgraph.pregel", f"Pregel.{method}", getattr(graphs, method))

    def _uninstrument_now(self, **kwargs: Any) -> None:
        self._patches.unwrap_all()
