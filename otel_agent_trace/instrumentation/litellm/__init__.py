"""LiteLLM: ``litellm.completion`` and ``litellm.acompletion`` (plain and ``stream=True``), one
model span per call whichever provider LiteLLM calls (``Router`` calls them too).

The provider's own client underneath (the ``openai`` SDK for OpenAI, Azure and compatible
servers; ``httpx`` for Anthropic, Ollama and most others) makes no second span: the LiteLLM span
is one of our model spans, and a model call under one of ours makes none (its HTTP request is
under it). ``opentelemetry-instrument`` loads this as ``agent_trace_litellm``; by hand::

    LiteLLMInstrumentor().instrument()

LiteLLM fetches its model price list from GitHub when it is imported, unless
``LITELLM_LOCAL_MODEL_COST_MAP=True``. Under a model replay (``AGENT_TRACE_MODEL_REPLAY``)
nothing leaves the machine and that request would be refused, stopping the agent at
``import litellm``: in the replayed process the variable is set to ``True`` at start-up (LiteLLM
then reads the price list it ships with), unless the user set it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.settings import ENV_MODEL_REPLAY

LOCAL_COST_MAP = "LITELLM_LOCAL_MODEL_COST_MAP"


class LiteLLMInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for LiteLLM (``gen_ai.provider.name``: the provider it calls)."""

    library_module = "litellm"

    _patches = Patches("agent_trace_litellm", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.litellm.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        replayed = os.environ.get(ENV_MODEL_REPLAY)
        if replayed and LOCAL_COST_MAP not in os.environ and "litellm" not in sys.modules:
            os.environ[LOCAL_COST_MAP] = "True"  # its price list from its own copy, not GitHub
        super()._instrument(**kwargs)

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.litellm.completion import (
            CompletionSpec,
            async_completion,
            sync_completion,
        )

        spec, patches = CompletionSpec(), self._patches
        patches.wrap("litellm", "completion", sync_completion(spec, patches))
        patches.wrap("litellm", "acompletion", async_completion(spec, patches))

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
