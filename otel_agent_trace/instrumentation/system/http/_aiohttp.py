"""aiohttp's client, ``ClientSession._request``: each exchange kept for model replay, and answered
by the player during one (google-genai's async client sends through aiohttp when it is installed).

Recording: the request as the session is given it (method, URL with its ``params``, headers, a
``json=`` body serialized as the session serializes it, a ``bytes`` / ``str`` ``data=``); the
response's status and headers, and its body as the agent reads it from ``response.content``
(decoded, as aiohttp hands it over), through a proxy of that stream.

Replaying: the player decides as for ``httpx`` (refusal, divergence, live). A recorded answer is
served by a loopback server of ours in this process (started at the first one) to which the
request is sent instead, so aiohttp builds its own response from the recorded status, headers and
pieces (streamed one piece a chunk, as recorded) — nothing leaves the machine. What differs from
the recorded run: ``response.url`` is the loopback one, and ``content-encoding`` /
``content-length`` are left out (the pieces were kept decoded).

Our own requests (the OTLP exporter's) are neither kept nor answered.
"""

from __future__ import annotations

import itertools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import wrapt

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _exchange

MODULE = "aiohttp.client"
METHOD = "ClientSession._request"
_HOP = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}


def wrap(patches: Any, module: Any) -> None:
    patches.wrap(module, METHOD, _request)


def _request(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player = _replay.player
    if player is None and sink._active is None:
        return wrapped(*args, **kwargs)
    return _run(wrapped, instance, player, args, kwargs)


async def _run(wrapped: Any, session: Any, player: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    try:
        method = str(args[0] if args else kwargs["method"]).upper()
        url = _url_of(session, args[1] if len(args) > 1 else kwargs["str_or_url"], kwargs.get("params"))
    except Exception:  # odd arguments: aiohttp raises on them itself
        return await wrapped(*args, **kwargs)
    if _exchange.own_request(url):
        return await wrapped(*args, **kwargs)
    body = _body(session, kwargs)
    target = _exchange.recording_target(url)
    if player is not None:
        found = player.decide(method, url, body)
        rest = {k: v for k, v in kwargs.items() if k not in ("method", "str_or_url", "params")}
        if found is None:  # on to the live endpoint: path, headers and body kept
            response = await wrapped(method, _exchange.on_live_origin(player, url), **rest)
        else:
            response = await wrapped(method, _server().serve(found), **rest)
    else:
        response = await wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, method, url, kwargs, body, response)
    return response


def _url_of(session: Any, str_or_url: Any, params: Any) -> str:
    build = getattr(session, "_build_url", None)
    url = build(str_or_url) if build is not None else str_or_url
    if params:
        from yarl import URL

        url = URL(url).extend_query(params)
    return str(url)


def _body(session: Any, kwargs: dict[str, Any]) -> bytes | None:
    """The body as aiohttp will send it, when it is JSON, bytes or text (else not kept)."""
    if kwargs.get("json") is not None:
        dumps = getattr(session, "_json_serialize", None)
        if dumps is None:
            import json

            dumps = json.dumps
        text = dumps(kwargs["json"])
        return text if isinstance(text, bytes) else str(text).encode("utf-8")
    data = kwargs.get("data")
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8")
    return b"" if data is None else None


# --- recording ---------------------------------------------------------------------------------


def _keep(target: Any, method: str, url: str, kwargs: dict[str, Any], body: Any, response: Any) -> None:
    try:
        given: Any = kwargs.get("headers") or ()
        pairs = given.items() if hasattr(given, "items") else given  # a mapping, or (name, value) pairs
        headers = [[str(k), str(v)] for k, v in pairs]
        version = getattr(response, "version", None)
        kept = _exchange.keep(
            target,
            method=method,
            url=url,
            headers=[h for h in headers if not _exchange._is_secret(h[0])],
            body=body,
            status=response.status,
            http_version=f"HTTP/{version.major}.{version.minor}" if version is not None else None,
            reason=response.reason,
            response_headers=[
                [k.decode("latin-1"), v.decode("latin-1")]
                for k, v in response.raw_headers
                if not _exchange._is_secret(k.decode("latin-1"))
            ],
        )
        if kept is not None:
            response.content = TeeReader(response.content, kept)
    except Exception as exc:
        internal_error("keeping an aiohttp exchange", exc)


class TeeReader(wrapt.ObjectProxy):  # type: ignore[misc]
    """aiohttp's ``StreamReader`` of a response, passing every piece read to the agent and a copy
    to the recorder (its iterators read through this proxy too)."""

    def __init__(self, reader: Any, kept: Any):
        super().__init__(reader)
        self._self_kept = kept

    def _self_add(self, data: bytes, done: bool = False) -> bytes:
        if data:
            self._self_kept.add(bytes(data))
        if done or not data:
            self._self_kept.done()
        return data

    async def read(self, n: int = -1) -> bytes:
        return self._self_add(await self.__wrapped__.read(n), done=n < 0)

    async def readany(self) -> bytes:
        return self._self_add(await self.__wrapped__.readany())

    async def readline(self) -> bytes:
        return self._self_add(await self.__wrapped__.readline())

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        return self._self_add(await self.__wrapped__.readuntil(separator))

    async def readexactly(self, n: int) -> bytes:
        return self._self_add(await self.__wrapped__.readexactly(n))

    async def readchunk(self) -> tuple[bytes, bool]:
        data, end = await self.__wrapped__.readchunk()
        if data:
            self._self_kept.add(bytes(data))
        elif not end:  # (b"", False): the end of the body
            self._self_kept.done()
        return data, end

    def __aiter__(self) -> Any:
        from aiohttp.streams import AsyncStreamIterator

        return AsyncStreamIterator(self.readline)

    def iter_any(self) -> Any:
        from aiohttp.streams import AsyncStreamIterator

        return AsyncStreamIterator(self.readany)

    def iter_chunked(self, n: int) -> Any:
        from aiohttp.streams import AsyncStreamIterator

        return AsyncStreamIterator(lambda: self.read(n))

    def iter_chunks(self) -> Any:
        from aiohttp.streams import ChunkTupleAsyncStreamIterator

        return ChunkTupleAsyncStreamIterator(self)  # type: ignore[arg-type]


# --- the loopback server that answers a replayed request ---------------------------------------


class _Answers:
    """A loopback HTTP server of this process answering each replayed request once, with the
    recorded status, headers and body pieces (one chunk each); nothing else."""

    def __init__(self) -> None:
        self._answers: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                with owner._lock:
                    found = owner._answers.pop(self.path, None)
                if found is None:
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                self.send_response(found.status, found.reason)
                for name, value in found.response_headers:
                    if name.lower() not in _HOP:
                        self.send_header(name, value)
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.close_connection = True
                self.end_headers()
                for chunk in found.chunks:
                    if chunk:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        thread = threading.Thread(target=self._server.serve_forever, name="oat-replay-answers", daemon=True)
        thread.start()

    def serve(self, found: Any) -> str:
        """The URL that answers one request with the recorded exchange ``found``."""
        path = f"/recorded/{next(self._ids)}"
        with self._lock:
            self._answers[path] = found
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"


_answers: _Answers | None = None
_answers_lock = threading.Lock()


def _server() -> _Answers:
    global _answers
    with _answers_lock:
        if _answers is None:
            _answers = _Answers()
        return _answers
