"""botocore's transport, ``URLLib3Session.send``: each exchange kept for model replay, and
answered by the player during one (boto3 clients: Amazon Bedrock, as Strands and DevDuck call it).

botocore hands ``send`` a final request (``AWSPreparedRequest``: method, URL, signed headers, body
bytes) and gets back an ``AWSResponse`` whose ``raw`` is urllib3's response. For a call whose
output is not streamed, ``send`` reads the whole body before returning (``response.content``):
it is kept as one chunk. For a streamed output (``converse_stream``'s event stream, an
``invoke_model`` body) ``raw`` is handed on unread: it is replaced by a proxy that passes every
byte through and keeps a copy as the caller reads it (``stream``, ``read``, ``readinto``).

Replaying: the player decides as for ``httpx`` (refusal, divergence, live); a recorded answer is a
real urllib3 ``HTTPResponse`` over the recorded chunks (read back one chunk a read, as recorded),
so botocore parses it, event stream and errors included, exactly as it parsed the original.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import wrapt

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _exchange

MODULE = "botocore.httpsession"
METHOD = "URLLib3Session.send"


def wrap(patches: Any, module: Any) -> None:
    patches.wrap(module, METHOD, _send)


def _send(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player = _exchange._player
    if player is None and sink._active is None:
        return wrapped(*args, **kwargs)
    request = args[0] if args else kwargs["request"]
    target = _exchange.recording_target(request.url)
    if player is not None:
        response = _answer(player, request, wrapped, args, kwargs)
    else:
        response = wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, request, response)
    return response


def _body(request: Any) -> bytes | None:
    """The request's body when it is bytes (a file-like body is never read here)."""
    body = getattr(request, "body", None)
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    return b"" if body is None else None


def _pairs(headers: Any) -> list[list[str]]:
    out = []
    for name, value in headers.items():
        name = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        if not _exchange._is_secret(name):
            out.append([name, value.decode("latin-1") if isinstance(value, bytes) else str(value)])
    return out


# --- recording ---------------------------------------------------------------------------------


def _keep(target: tuple[Any, Any], request: Any, response: Any) -> None:
    try:
        raw = response.raw
        version = getattr(raw, "version", None)  # 11: HTTP/1.1
        http_version = (
            f"HTTP/{version // 10}.{version % 10}" if isinstance(version, int) and version else None
        )
        kept = _exchange.keep(
            target,
            method=str(request.method),
            url=str(request.url),
            headers=_pairs(request.headers),
            body=_body(request),
            status=response.status_code,
            http_version=http_version,
            reason=getattr(raw, "reason", None),
            response_headers=_pairs(response.headers),
        )
        if kept is None:
            return
        content = response.__dict__.get("_content")
        if content is not None:  # read by send() already (an output that is not streamed)
            if content:
                kept.add(content)
            kept.done()
        else:
            response.raw = _TeeRaw(raw, kept)
    except Exception as exc:
        internal_error("keeping a botocore exchange", exc)


class _TeeRaw(wrapt.ObjectProxy):  # type: ignore[misc]
    """urllib3's response, passing every byte read to the caller and a copy to the recorder."""

    def __init__(self, raw: Any, kept: Any):
        super().__init__(raw)
        self._self_kept = kept

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        kept = self._self_kept
        for chunk in self.__wrapped__.stream(*args, **kwargs):
            kept.add(chunk)
            yield chunk
        kept.done()

    def read(self, *args: Any, **kwargs: Any) -> Any:
        data = self.__wrapped__.read(*args, **kwargs)
        if data:
            self._self_kept.add(bytes(data))
        amt = args[0] if args else kwargs.get("amt")
        if not data or amt is None:
            self._self_kept.done()
        return data

    def readinto(self, b: Any) -> int:
        n = self.__wrapped__.readinto(b)
        if n:
            self._self_kept.add(bytes(memoryview(b)[:n]))
        else:
            self._self_kept.done()
        return n


# --- replaying ---------------------------------------------------------------------------------


def _answer(player: Any, request: Any, wrapped: Any, args: Any, kwargs: Any) -> Any:
    found = player.decide(str(request.method), str(request.url), _body(request))
    if found is None:  # on to the live endpoint: path, headers and body kept
        base = urlsplit(player.live_url or "")
        request.url = urlunsplit(urlsplit(request.url)._replace(scheme=base.scheme, netloc=base.netloc))
        return wrapped(*args, **kwargs)
    return _response(request, found)


def _response(request: Any, found: Any) -> Any:
    """botocore's response to ``request`` built from the recorded exchange ``found``."""
    import urllib3
    from botocore.awsrequest import AWSResponse

    headers = urllib3.HTTPHeaderDict()
    for name, value in found.response_headers:
        headers.add(name, value)
    raw = urllib3.HTTPResponse(
        body=_RecordedBody(found.chunks),
        headers=headers,
        status=found.status,
        reason=found.reason,
        preload_content=False,
        decode_content=False,
        enforce_content_length=False,
        request_method=str(request.method),
        request_url=str(request.url),
    )
    response = AWSResponse(request.url, found.status, headers, raw)
    if not getattr(request, "stream_output", False):
        response.content  # noqa: B018 -- read now, as send() does for an output not streamed
    return response


class _RecordedBody:
    """The recorded body as urllib3 reads a socket's: each read returns (at most ``amt`` of) the
    next recorded chunk, so a stream is read back in the chunks it was recorded in."""

    def __init__(self, chunks: list[bytes]):
        self._chunks = list(chunks)
        self._next = 0
        self._rest = b""
        self.closed = False

    def read(self, amt: int | None = None) -> bytes:
        if amt is None:
            data = self._rest + b"".join(self._chunks[self._next :])
            self._rest, self._next = b"", len(self._chunks)
            return data
        if not self._rest and self._next < len(self._chunks):
            self._rest = self._chunks[self._next]
            self._next += 1
        data, self._rest = self._rest[:amt], self._rest[amt:]
        return data

    def read1(self, amt: int | None = None) -> bytes:
        return self.read(amt if amt is not None and amt >= 0 else None)

    def close(self) -> None:
        self.closed = True
