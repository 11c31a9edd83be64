"""Google Gen AI SDK (``google-genai``, Gemini): ``client.models.generate_content`` and
``generate_content_stream``, and their ``client.aio`` forms, with tools; the Python functions the
SDK calls itself (automatic function calling) as tool calls.

``opentelemetry-instrument`` loads this as ``agent_trace_google_genai``; by hand::

    GoogleGenAIInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

MODULE = "google.genai.models"


class GoogleGenAIInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for Gemini (``gen_ai.provider.name = gcp.gemini`` or ``gcp.vertex_ai``)."""

    library_module = MODULE

    _patches = Patches("agent_trace_google_genai", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.google_genai.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.google_genai.generate import (
            GenerateSpec,
            async_wrapper,
            sync_wrapper,
        )

        patches, plain, streamed = self._patches, GenerateSpec(stream=False), GenerateSpec(stream=True)
        patches.wrap(MODULE, "Models.generate_content", sync_wrapper(plain, patches))
        patches.wrap(MODULE, "Models.generate_content_stream", sync_wrapper(streamed, patches))
        patches.wrap(MODULE, "AsyncModels.generate_content", async_wrapper(plain, patches))
        patches.wrap(MODULE, "AsyncModels.generate_content_stream", async_wrapper(streamed, patches))
        from otel_agent_trace.instrumentation.google_genai import afc  # automatic function calling

        patches.wrap(afc.MODULE, "get_function_response_parts", afc.responses_wrapper)
        patches.wrap(afc.MODULE, "get_function_response_parts_async", afc.async_responses_wrapper)
        patches.wrap(afc.MODULE, "invoke_function_from_dict_args", afc.invoke_wrapper(patches))
        patches.wrap(afc.MODULE, "invoke_function_from_dict_args_async", afc.async_invoke_wrapper(patches))

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
