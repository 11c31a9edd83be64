"""Stream proxies: the caller gets the SDK's stream, unchanged in behaviour, and the model span
ends however the stream ends.

A :class:`StreamProxy` (``wrapt.ObjectProxy``) passes every attribute, ``isinstance`` check and
context-manager call through. It watches the items as they are read and ends the span

* when the stream is exhausted (the full result), or fails (the error);
* on ``close()`` / ``__exit__`` / closing ``stream.response`` (the SDK helpers close through it)
  before the end: the span ends with what was received so far and
  ``agent_trace.stream.abandoned = true``;
* when the stream is garbage-collected unread (``weakref.finalize``), as the last resort.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

import wrapt

from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai.model_call import ModelCall, ModelResult


class Accumulator(Protocol):
    def observe(self, item: Any, /) -> None: ...

    def result(self) -> ModelResult: ...


def _end(call: ModelCall, acc: Accumulator, abandoned: bool) -> None:
    if call.ended:
        return
    try:
        result = acc.result()
    except Exception as exc:
        internal_error("reading a stream result", exc)
        result = ModelResult()
    call.finish(result, abandoned=abandoned)


def _collected(call: ModelCall, acc: Accumulator) -> None:
    """The stream was garbage-collected before it ended."""
    _end(call, acc, True)


class _ResponseProxy(wrapt.ObjectProxy):
    """The stream's HTTP response: closing it ends the span (the SDK helpers close this way)."""

    def __init__(self, wrapped: Any, owner: Any):
        super().__init__(wrapped)
        self._self_owner = owner

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_owner._self_end()

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_owner._self_end()


class _Base(wrapt.ObjectProxy):
    def __init__(self, wrapped: Any, call: ModelCall, acc: Accumulator):
        super().__init__(wrapped)
        self._self_call = call
        self._self_acc = acc
        self._self_done = False
        self._self_response: Any = None
        self._self_finalizer = weakref.finalize(self, _collected, call, acc)

    def _self_observe(self, item: Any) -> None:
        try:
            self._self_call.first_chunk()
            self._self_acc.observe(item)
        except Exception as exc:
            internal_error("reading a stream item", exc)

    def _self_end(self, exhausted: bool = False) -> None:
        if self._self_done:
            return
        self._self_done = True
        self._self_finalizer.detach()
        _end(self._self_call, self._self_acc, not exhausted)

    def _self_fail(self, exc: BaseException) -> None:
        if self._self_done:
            return
        self._self_done = True
        self._self_finalizer.detach()
        try:
            result = self._self_acc.result()
        except Exception as err:  # the call's own error is recorded all the same
            internal_error("reading a failed stream's partial result", err)
            result = None
        self._self_call.fail(exc, result)

    @property
    def response(self) -> Any:
        if self._self_response is None:
            self._self_response = _ResponseProxy(self.__wrapped__.response, self)
        return self._self_response


class StreamProxy(_Base):
    """A synchronous stream (``openai.Stream``, ``anthropic.Stream``)."""

    def __iter__(self) -> StreamProxy:
        return self

    def __next__(self) -> Any:
        try:
            item = self.__wrapped__.__next__()
        except StopIteration:
            self._self_end(exhausted=True)
            raise
        except Exception as exc:
            self._self_fail(exc)
            raise
        self._self_observe(item)
        return item

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_end()

    def __enter__(self) -> Any:
        entered = self.__wrapped__.__enter__()
        return self if entered is self.__wrapped__ else entered

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            return self.__wrapped__.__exit__(*exc_info)
        finally:
            self._self_end()


class AsyncStreamProxy(_Base):
    """An asynchronous stream (``openai.AsyncStream``, ``anthropic.AsyncStream``)."""

    def __aiter__(self) -> AsyncStreamProxy:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self.__wrapped__.__anext__()
        except StopAsyncIteration:
            self._self_end(exhausted=True)
            raise
        except Exception as exc:
            self._self_fail(exc)
            raise
        self._self_observe(item)
        return item

    async def close(self) -> Any:
        try:
            return await self.__wrapped__.close()
        finally:
            self._self_end()

    async def __aenter__(self) -> Any:
        entered = await self.__wrapped__.__aenter__()
        return self if entered is self.__wrapped__ else entered

    async def __aexit__(self, *exc_info: Any) -> Any:
        try:
            return await self.__wrapped__.__aexit__(*exc_info)
        finally:
            self._self_end()


class LazyStreamProxy(StreamProxy):
    """A stream that sends its request when first read (a generator: ``ollama``'s
    ``chat(stream=True)``, google-genai's ``generate_content_stream``): the model span is current
    until the first item arrives, so the HTTP request (its span, its exchange) is under it, as
    for a client that sends in the call."""

    def __next__(self) -> Any:
        if self._self_done or self._self_call.first_chunk_ns is not None:
            return super().__next__()
        token = self._self_call.activate()
        try:
            return super().__next__()
        finally:
            self._self_call.deactivate(token)


class AsyncLazyStreamProxy(AsyncStreamProxy):
    """:class:`LazyStreamProxy` for an async generator (``aclose`` ends the span too)."""

    async def __anext__(self) -> Any:
        if self._self_done or self._self_call.first_chunk_ns is not None:
            return await super().__anext__()
        token = self._self_call.activate()
        try:
            return await super().__anext__()
        finally:
            self._self_call.deactivate(token)

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_end()
