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

import wrapt

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_CHAT = "langchain_core.language_models.chat_models"
_OPENAI = "langchain_openai.chat_models.base"
_OPENAI_CHUNK = "BaseChatOpenAI._convert_chunk_to_generation_chunk"


class LangChainInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Chat-model spans and graph-run agent spans for LangChain / LangGraph."""

    library_module = "langchain_core"

    _patches = Patches("agent_trace_langchain", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.langchain.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.langchain import chat_models, graphs

        patches = self._patches
        for method in ("invoke", "ainvoke", "stream", "astream"):
            patches.wrap(_CHAT, f"BaseChatModel.{method}", chat_models.wrapper(method, patches))
        for method in ("stream", "astream"):  # langgraph is optional
            patches.wrap("langgraph.pregel", f"Pregel.{method}", graphs.wrapper(method, patches))
        # langchain-openai (optional): the response id of a streamed call, from its raw chunks
        wrapt.register_post_import_hook(self._on_langchain_openai, _OPENAI)

    def _on_langchain_openai(self, module: Any) -> None:
        if not type(self)._wanted:  # switched off since: a post-import hook cannot be removed
            return
        from otel_agent_trace.instrumentation.langchain import chat_models

        try:
            self._patches.wrap(module, _OPENAI_CHUNK, chat_models.note_raw_chunk)
        except Exception as exc:  # never break the agent's import of its own library
            internal_error("instrumenting langchain-openai", exc)
