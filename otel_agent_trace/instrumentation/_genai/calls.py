"""Generic sync/async wrappers for a model API method described by a :class:`CallSpec`."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any

import wrapt

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.streams import AsyncStreamProxy, StreamProxy
from otel_agent_trace.instrumentation._patching import Patches


class CallSpec:
    """How to read one API method: its request, its response and its stream items.

    Subclasses implement ``request`` (model, span attributes, stream flag), ``input``
    (messages, system, tool definitions), ``result`` (a :class:`ModelResult` from a response)
    and ``accumulator`` (an object with ``observe(item)`` / ``result()`` for streams).
    ``raw_types`` are the SDK's raw responses (``with_raw_response`` / ``with_streaming_response``
    hand them back instead of the response): the call is read from what their ``parse()`` returns.
    """

    provider = ""
    operation = "chat"
    to_semconv: Callable[[list[Any]], list[dict[str, Any]]] | None = None
    raw_types: tuple[type, ...] = ()

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
            if self.raw_types and isinstance(response, self.raw_types):
                return RawResponseProxy(response, self, call, is_async)
            if self.is_stream(response):
                proxy = AsyncStreamProxy if is_async else StreamProxy
                return proxy(response, call, self.accumulator())
            call.finish(self.result(response, call.content))
        except Exception as exc:
            if not call.ended:
                call.finish(mc.ModelResult())
            internal_error("finishing a model call", exc)
        return response


def _unparsed(call: mc.ModelCall) -> None:
    """A raw response closed or collected before ``parse()``: the call ends with no result."""
    if not call.ended:
        call.finish(mc.ModelResult())


class RawResponseProxy(wrapt.ObjectProxy):
    """The SDK's raw response, unchanged in behaviour: its ``parse()`` value (the response, or
    the stream, proxied as ``create``'s would be) finishes the call as ``create``'s does; an error
    there fails it. Closed (the ``with_streaming_response`` context manager's exit) or collected
    before that, the call ends with no result; closed while its stream is read, the stream's span
    ends with what was received (abandoned)."""

    def __init__(self, wrapped: Any, spec: CallSpec, call: mc.ModelCall, is_async: bool):
        super().__init__(wrapped)
        self._self_spec = spec
        self._self_call = call
        self._self_async = is_async
        self._self_handed: tuple[Any, Any] | None = None  # (what parse() returned, what we gave)
        self._self_finalizer = weakref.finalize(self, _unparsed, call)

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("to") is not None:  # another type than the API's: nothing we can read
            return self.__wrapped__.parse(*args, **kwargs)
        try:
            parsed = self.__wrapped__.parse(*args, **kwargs)
        except BaseException as exc:
            self._self_fail(exc)
            raise
        if asyncio.iscoroutine(parsed):  # ``AsyncAPIResponse.parse``
            return self._self_aparse(parsed)
        return self._self_hand(parsed)

    async def _self_aparse(self, parsing: Any) -> Any:
        try:
            parsed = await parsing
        except BaseException as exc:
            self._self_fail(exc)
            raise
        return self._self_hand(parsed)

    def _self_hand(self, parsed: Any) -> Any:
        handed = self._self_handed
        if handed is not None and handed[0] is parsed:  # the SDK caches what it parsed
            return handed[1]
        if self._self_call.ended:
            return parsed
        self._self_finalizer.detach()
        value = self._self_spec.finish(self._self_call, parsed, is_async=self._self_async)
        self._self_handed = (parsed, value)
        return value

    def _self_fail(self, exc: BaseException) -> None:
        self._self_finalizer.detach()
        self._self_call.fail(exc)

    def _self_closed(self) -> None:
        self._self_finalizer.detach()
        handed = self._self_handed
        end = getattr(handed[1], "_self_end", None) if handed is not None else None
        if end is not None:  # a stream proxy: it ends with what was read (once)
            end()
        else:
            _unparsed(self._self_call)

    def close(self) -> Any:
        try:
            closing = self.__wrapped__.close()
        except BaseException:
            self._self_closed()
            raise
        if asyncio.iscoroutine(closing):  # ``AsyncAPIResponse.close``
            return self._self_aclose(closing)
        self._self_closed()
        return closing

    async def _self_aclose(self, closing: Any) -> Any:
        try:
            return await closing
        finally:
            self._self_closed()


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
