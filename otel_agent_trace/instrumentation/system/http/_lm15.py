"""lm15's transport (DSPy 3.4's native engine, vendored as ``dspy._vendor.lm15``): each exchange
kept for model replay, and answered by the player during one.

lm15 speaks HTTP/1.1 on its own sockets: ``StdlibTransport.stream(TransportRequest)`` returns a
``TransportResponse`` (a context manager; iterating it yields the body's chunks, already decoded
when the server compressed them), and the async transport's ``_do_stream`` (what both ``await
transport.stream(...)`` and ``async with transport.stream(...)`` run) an ``AsyncTransportResponse``.
The request is whole (method, URL, headers, body bytes), so it is kept and compared as the other
clients' are; the response's chunks are teed as lm15 reads them. Replaying, the recorded chunks
come back in a response of lm15's own type (its ``content-encoding`` and ``content-length`` left
out: the chunks were kept decoded), and a request the player does not answer goes to
``live_url`` (path, headers and body kept) or is refused, never sent, as for every client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _exchange

SYNC_MODULE = "dspy._vendor.lm15.transports._sync"
ASYNC_MODULE = "dspy._vendor.lm15.transports._async"
_LEFT_OUT = frozenset(("content-encoding", "content-length"))


def wrap(patches: Any, module: Any) -> None:
    if module.__name__ == SYNC_MODULE:
        patches.wrap(module, "StdlibTransport.stream", _stream)
    elif module.__name__ == ASYNC_MODULE:
        patches.wrap(module, "StdlibAsyncTransport._do_stream", _do_stream)


def _stream(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player: Any = _replay.player  # (the bridge types it by the methods capture code calls)
    if player is None and sink._active is None:
        return wrapped(*args, **kwargs)
    request = args[0] if args else kwargs["request"]
    if _exchange.own_request(str(request.url)):
        return wrapped(*args, **kwargs)
    target = _exchange.recording_target(request.url)
    if player is not None:
        found = player.decide(str(request.method), str(request.url), bytes(request.body or b""))
        if found is not None:
            response = _recorded(found, is_async=False)
        else:
            response = wrapped(_live(player, request))
    else:
        response = wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, request, response, is_async=False)
    return response


async def _do_stream(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player: Any = _replay.player  # (the bridge types it by the methods capture code calls)
    if player is None and sink._active is None:
        return await wrapped(*args, **kwargs)
    request = args[0] if args else kwargs["request"]
    if _exchange.own_request(str(request.url)):
        return await wrapped(*args, **kwargs)
    target = _exchange.recording_target(request.url)
    if player is not None:
        found = player.decide(str(request.method), str(request.url), bytes(request.body or b""))
        if found is not None:
            response = _recorded(found, is_async=True)
        else:
            response = await wrapped(_live(player, request))
    else:
        response = await wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, request, response, is_async=True)
    return response


def _live(player: Any, request: Any) -> Any:
    """``request`` sent to ``live_url``'s origin instead (path, headers and body kept)."""
    url = _exchange.on_live_origin(player, str(request.url))
    netloc = urlsplit(url).netloc
    headers = [(k, netloc if k.lower() == "host" else v) for k, v in request.headers]
    return replace(request, url=url, headers=headers)


def _recorded(found: Any, *, is_async: bool) -> Any:
    """The recorded response in lm15's own type: its status, headers and chunks as recorded."""
    from dspy._vendor.lm15.transports._types import AsyncTransportResponse, TransportResponse

    headers = [(k, v) for k, v in found.response_headers if k.lower() not in _LEFT_OUT]
    common = {
        "status": found.status,
        "reason": found.reason or "",
        "headers": headers,
        "http_version": found.http_version or "HTTP/1.1",
    }
    if is_async:

        async def achunks() -> AsyncIterator[bytes]:
            for chunk in found.chunks:
                yield chunk

        async def arelease(body_consumed: bool) -> None:
            return None

        return AsyncTransportResponse(chunks=achunks(), release=arelease, **common)
    return TransportResponse(chunks=iter(found.chunks), release=lambda body_consumed: None, **common)


def _keep(target: tuple[Any, Any], request: Any, response: Any, *, is_async: bool) -> None:
    """Hand the exchange to the recorder now and tee the body's chunks as lm15 reads them."""
    try:
        kept = _exchange.keep(
            target,
            method=str(request.method),
            url=str(request.url),
            headers=_pairs(request.headers),
            body=bytes(request.body or b""),
            status=response.status,
            http_version=response.http_version or None,
            reason=response.reason or None,
            response_headers=_pairs(response.headers),
        )
        if kept is not None:
            response._chunks = (_atee if is_async else _tee)(response._chunks, kept)
    except Exception as exc:
        internal_error("keeping an lm15 exchange", exc)


def _pairs(headers: Any) -> list[list[str]]:
    """lm15's ``(name, value)`` headers as ``[name, value]`` pairs, credentials left out."""
    return [[str(k), str(v)] for k, v in headers if not _exchange._is_secret(str(k))]


def _tee(chunks: Any, kept: Any) -> Iterator[bytes]:
    for chunk in chunks:
        kept.add(chunk)
        yield chunk
    kept.done()


async def _atee(chunks: Any, kept: Any) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        kept.add(chunk)
        yield chunk
    kept.done()
