"""``agent_trace_langchain_tools``: an ``execute_tool`` span for every LangChain tool call
(``BaseTool`` subclasses, ``StructuredTool`` and ``@tool`` functions; ``run``, ``arun``,
``invoke``, ``ainvoke``), carrying the model's tool-call id when the call came from an
``AIMessage``."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class LangChainToolsInstrumentor(DeferredInstrumentor):
    library_module = "langchain_core"
    _patches = Patches("agent_trace_langchain_tools")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        try:
            from langchain_core.tools import BaseTool
        except ImportError:
            return
        from .wrappers import arun_wrapper, run_wrapper, use

        use(self._patches)

        self._patches.wrap(BaseTool, "run", run_wrapper)
        self._patches.wrap(BaseTool, "arun", arun_wrapper)


__all__ = ["LangChainToolsInstrumentor"]
