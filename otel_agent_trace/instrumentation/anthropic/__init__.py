"""Anthropic Python SDK: ``messages.create`` (sync, async, ``stream=True``), ``messages.parse``
and the ``messages.stream(...)`` helper (whose request is made when it is entered); the same for
``beta.messages``.

``opentelemetry-instrument`` loads this as ``agent_trace_anthropic``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._genai.calls import CallSpec, async_wrapper, sync_wrapper
from otel_agent_trace.instrumentation._genai.model_call import is_model_span
from otel_agent_trace.instrumentation._genai.streams import AsyncStreamProxy, StreamProxy
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.anthropic.package import _instruments

_MODULE = "anthropic.resources.messages"
_BETA = "anthropic.resources.beta.messages"
_NATIVE = ("anthropic._base_client", "start_api_call_span")
_REQUEST_SUFFIX = "__api_request"  # the stream manager's private request (name-mangled per class)


def _stream_helper(spec: CallSpec, is_async: bool, patches: Patches) -> Any:
    """``messages.stream(...)`` returns a manager holding the request it makes on ``__enter__``;
    we replace that request so the raw stream it opens goes through our stream proxy."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        manager = wrapped(*args, **kwargs)
        try:
            attr = next((a for a in vars(manager) if a.endswith(_REQUEST_SUFFIX)), None)
            request = getattr(manager, attr, None) if attr else None
            if request is None:
                return manager
            if is_async:

                async def opened() -> Any:
                    call = spec.begin(dict(kwargs, stream=True), patches)
                    if call is None:
                        return await request
                    raw = await call.acall(lambda: request, (), {})
                    return AsyncStreamProxy(raw, call, spec.accumulator())

                setattr(manager, attr, opened())
            else:

                def opened_sync() -> Any:
                    call = spec.begin(dict(kwargs, stream=True), patches)
                    if call is None:
                        return request()
                    raw = call.call(request, (), {})
                    return StreamProxy(raw, call, spec.accumulator())

                setattr(manager, attr, opened_sync)
        except Exception as exc:
            internal_error("anthropic messages.stream", exc)
        return manager

    return wrapper


def _native_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """The SDK's own call span (anthropic >= 2 traces its API calls), left out when a model span
    already describes the call: one model call, one span. Other API calls keep theirs."""
    try:
        if is_model_span(trace.get_current_span()):
            return None  # documented: "the call goes on without one"
    except Exception as exc:
        internal_error("anthropic native span", exc)
    return wrapped(*args, **kwargs)


class AnthropicInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for the Anthropic SDK (``gen_ai.provider.name = anthropic``)."""

    library_module = "anthropic"

    _patches = Patches("agent_trace_anthropic", step_over_peers=True)  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        import anthropic

        from otel_agent_trace.instrumentation.anthropic.messages import MessagesSpec

        spec = MessagesSpec((anthropic.Stream, anthropic.AsyncStream))
        patches = self._patches
        for module in (_MODULE, _BETA):  # client.messages and client.beta.messages
            patches.wrap(module, "Messages.create", sync_wrapper(spec, patches))
            patches.wrap(module, "AsyncMessages.create", async_wrapper(spec, patches))
            patches.wrap(module, "Messages.parse", sync_wrapper(spec, patches))
            patches.wrap(module, "AsyncMessages.parse", async_wrapper(spec, patches))
            patches.wrap(module, "Messages.stream", _stream_helper(spec, False, patches))
            patches.wrap(module, "AsyncMessages.stream", _stream_helper(spec, True, patches))
        patches.wrap(*_NATIVE, _native_span)

    @property
    def foreign(self) -> list[str]:
        return list(self._patches.foreign)
