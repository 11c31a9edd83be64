"""The Anthropic wrappers that are not a plain model call: ``messages.stream`` (its request is
made on ``__enter__``) and the SDK's own API-call span. Imported when anthropic is."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai.calls import CallSpec
from otel_agent_trace.instrumentation._genai.model_call import is_model_span
from otel_agent_trace.instrumentation._genai.streams import AsyncStreamProxy, StreamProxy
from otel_agent_trace.instrumentation._patching import Patches

MODULE = "anthropic.resources.messages"
BETA = "anthropic.resources.beta.messages"
NATIVE = ("anthropic._base_client", "start_api_call_span")
_REQUEST_SUFFIX = "__api_request"  # the stream manager's private request (name-mangled per class)


def stream_helper(spec: CallSpec, is_async: bool, patches: Patches) -> Any:
    """``messages.stream(...)`` returns a manager holding the request it makes on ``__enter__``;
    we replace that request so the raw stream it opens goes through our stream proxy."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        manager = wrapped(*args, **kwargs)
        try:
            attr = next((a for a in vars(manager) if a.endswith(_REQUEST_SUFFIX)), None)
            request = getattr(manager, attr, None) if attr else None
            if request is None or attr is None:
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


def native_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """The SDK's own call span (anthropic >= 2 traces its API calls), left out when a model span
    already describes the call: one model call, one span. Other API calls keep theirs."""
    try:
        if is_model_span(trace.get_current_span()):
            return None  # documented: "the call goes on without one"
    except Exception as exc:
        internal_error("anthropic native span", exc)
    return wrapped(*args, **kwargs)
