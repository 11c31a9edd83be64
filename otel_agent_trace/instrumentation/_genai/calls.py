"""Generic sync/async wrappers for a model API method described by a :class:`CallSpec`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.streams import AsyncStreamProxy, StreamProxy
from otel_agent_trace.instrumentation._patching import Patches


class CallSpec:
    """How to read one API method: its request, its response and its stream items.

    Subclasses implement ``request`` (model, span attributes, stream flag), ``input``
    (messages, system, tool definitions), ``result`` (a :class:`ModelResult` from a response)
    and ``accumulator`` (an object with ``observe(item)`` / ``result()`` for streams).
    """

    provider = ""
    operation = "chat"
    to_semconv: Callable[[list[Any]], list[dict[str, Any]]] | None = None

    def request(self, kwargs: dict[str, Any]) -> tuple[str | None, dict[str, Any], bool]:
        raise NotImplementedError

    def input(self, kwargs: dict[str, Any]) -> tuple[list[Any], Any, Any]:
        raise NotImplementedError

    def result(self, response: Any, content: bool = True) -> mc.ModelResult:
        """The result; output messages only when ``content`` (they cost a model dump)."""
        raise NotImplementedError

    def accumulator(self) -> Any:
        raise NotImplementedError

    def is_stream(self, response: Any) -> bool:
        raise NotImplementedError

    # -- shared steps (never raise) ------------------------------------------------------------

    def begin(self, kwargs: dict[str, Any], patches: Patches | None = None) -> mc.ModelCall | None:
        """The started call (``None``: not recorded here); spans from ``patches``' tracer."""
        try:
            model, params, stream = self.request(kwargs)
            tracer = patches.tracer() if patches is not None else None
            call = mc.begin(self.provider, self.operation, model, params, stream=stream, tracer=tracer)
            if call is not None and call.wants_content:
                messages, system, tools = self.input(kwargs)
                call.set_input(messages, system, tools, type(self).to_semconv)
            return call
        except Exception as exc:
            internal_error("starting a model call", exc)
            return None

    def finish(self, call: mc.ModelCall, response: Any, *, is_async: bool) -> Any:
        """The value to hand back: the response itself, or a stream proxy around it."""
        try:
            if self.is_stream(response):
                proxy = AsyncStreamProxy if is_async else StreamProxy
                return proxy(response, call, self.accumulator())
            call.finish(self.result(response, call.content))
        except Exception as exc:
            if not call.ended:
                call.finish(mc.ModelResult())
            internal_error("finishing a model call", exc)
        return response


def sync_wrapper(spec: CallSpec, patches: Patches | None = None) -> Callable[..., Any]:
    """The ``wrapt`` wrapper of a sync method; its spans come from ``patches``' tracer."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(kwargs, patches)
        if call is None:
            return wrapped(*args, **kwargs)
        response = call.call(wrapped, args, kwargs)
        return spec.finish(call, response, is_async=False)

    return wrapper


def async_wrapper(spec: CallSpec, patches: Patches | None = None) -> Callable[..., Any]:
    """:func:`sync_wrapper` for a coroutine method."""

    async def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = spec.begin(kwargs, patches)
        if call is None:
            return await wrapped(*args, **kwargs)
        response = await call.acall(wrapped, args, kwargs)
        return spec.finish(call, response, is_async=True)

    return wrapper
