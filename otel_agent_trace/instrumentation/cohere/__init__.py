"""Cohere's Python SDK, its v2 client (``cohere.ClientV2`` / ``AsyncClientV2``, or
``Client(...).v2``): ``chat`` and ``chat_stream``, sync and async, with tools.

Patched when the agent first reaches the v2 client (the SDK imports ``cohere.v2.client`` then),
so an agent that imports ``cohere`` for other APIs pays nothing. ``opentelemetry-instrument``
loads this as ``agent_trace_cohere``; by hand::

    CohereInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

MODULE = "cohere.v2.client"


class CohereInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Cohere SDK's v2 chat (``gen_ai.provider.name = cohere``)."""

    library_module = MODULE

    _patches = Patches("agent_trace_cohere", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.cohere.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation._genai.calls import async_wrapper, sync_wrapper
        from otel_agent_trace.instrumentation.cohere.chat import ChatSpec

        patches, plain, streamed = self._patches, ChatSpec(stream=False), ChatSpec(stream=True)
        patches.wrap(MODULE, "V2Client.chat", sync_wrapper(plain, patches))
        patches.wrap(MODULE, "AsyncV2Client.chat", async_wrapper(plain, patches))
        # both ``chat_stream`` are generator functions: the call returns the (async) generator at
        # once, and the request is sent when it is first read
        patches.wrap(MODULE, "V2Client.chat_stream", sync_wrapper(streamed, patches))
        patches.wrap(MODULE, "AsyncV2Client.chat_stream", sync_wrapper(streamed, patches))

    @property
    def foreign(self) -> list[str]:
        """Methods another instrumentation had wrapped before us (see docs/instrumentation.md)."""
        return list(self._patches.foreign)
