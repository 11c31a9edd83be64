"""Generators run inside a span: the span is current only while the inner generator runs (never
across a ``yield``, so no "Failed to detach context"), and ends however iteration ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span


def _attach(span: Span) -> object:
    return otel_context.attach(trace.set_span_in_context(span))


def _detach(token: object) -> None:
    otel_context.detach(token)  # type: ignore[arg-type]  # logs (never raises) a token of another context


def iterate_in_span(
    inner: Iterator[Any],
    start: Callable[[], Any],
    observe: Callable[[Any, Any], None],
    end: Callable[[Any, BaseException | None, bool], None],
) -> Iterator[Any]:
    """Yield from ``inner`` under the span ``start()`` returns (started at the first ``next``).

    ``observe(state, item)`` sees each item; ``end(state, error, exhausted)`` runs once.
    ``start`` returns a state object with a ``span`` attribute, or ``None`` (no span).
    """
    state = start()
    if state is None:
        yield from inner
        return
    error: BaseException | None = None
    exhausted = False
    try:
        while True:
            token = _attach(state.span)
            try:
                item = next(inner)
            except StopIteration:
                exhausted = True
                return
            finally:
                _detach(token)
            observe(state, item)
            yield item
    except GeneratorExit:
        raise
    except BaseException as exc:
        error = exc
        raise
    finally:
        close = getattr(inner, "close", None)
        if not exhausted and error is None and close is not None:
            close()
        end(state, error, exhausted)


async def aiterate_in_span(
    inner: AsyncIterator[Any],
    start: Callable[[], Any],
    observe: Callable[[Any, Any], None],
    end: Callable[[Any, BaseException | None, bool], None],
) -> AsyncIterator[Any]:
    """The async twin of :func:`iterate_in_span`."""
    state = start()
    if state is None:
        async for item in inner:
            yield item
        return
    error: BaseException | None = None
    exhausted = False
    try:
        while True:
            token = _attach(state.span)
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                exhausted = True
                return
            finally:
                _detach(token)
            observe(state, item)
            yield item
    except GeneratorExit:
        raise
    except BaseException as exc:
        error = exc
        raise
    finally:
        aclose = getattr(inner, "aclose", None)
        if not exhausted and error is None and aclose is not None:
            await aclose()
        end(state, error, exhausted)
