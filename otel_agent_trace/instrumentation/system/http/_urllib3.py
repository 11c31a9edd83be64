"""urllib3's response, as the transports over urllib3 (botocore's, requests') keep and replay it:
a proxy that keeps a copy of each piece of body the client reads, and a response built again
from the recorded pieces, read back one piece a read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import wrapt

from . import _exchange


def pairs(headers: Any) -> list[list[str]]:
    """Headers as ``[name, value]`` pairs in order (a repeated one as many pairs), credentials out."""
    out = []
    for name, value in headers.items():
        name = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        if not _exchange._is_secret(name):
            out.append([name, value.decode("latin-1") if isinstance(value, bytes) else str(value)])
    return out


def http_version(raw: Any) -> str | None:
    version = getattr(raw, "version", None)  # 11: HTTP/1.1
    return f"HTTP/{version // 10}.{version % 10}" if isinstance(version, int) and version else None


def body_of(body: Any) -> bytes | None:
    """A request's body when it is bytes or text (a file or generator body is never read here)."""
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    return b"" if body is None else None


class TeeRaw(wrapt.ObjectProxy):  # type: ignore[misc]
    """urllib3's response, passing every byte read to the caller and a copy to the recorder
    (what the client read: decoded when it asked urllib3 to decode)."""

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


class RecordedBody:
    """The recorded body as urllib3 reads a socket's: each read returns (at most ``amt`` of) the
    next recorded piece, so a stream is read back in the pieces it was recorded in."""

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


def recorded_response(found: Any, method: str, url: str, leave_out: Iterable[str] = ()) -> Any:
    """A urllib3 ``HTTPResponse`` over the recorded exchange ``found`` (its headers less
    ``leave_out``), never decoding: its pieces are given back as they were read."""
    import urllib3

    skip = {name.lower() for name in leave_out}
    body: Any = RecordedBody(found.chunks)  # file-like: what urllib3 reads a response from
    headers = urllib3.HTTPHeaderDict()
    for name, value in found.response_headers:
        if name.lower() not in skip:
            headers.add(name, value)
    return urllib3.HTTPResponse(
        body=body,
        headers=headers,
        status=found.status,
        reason=found.reason,
        preload_content=False,
        decode_content=False,
        enforce_content_length=False,
        request_method=method,
        request_url=url,
    )
