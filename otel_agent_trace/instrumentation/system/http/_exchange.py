"""Each HTTP exchange of ``httpx`` / ``httpx2`` at the transport, kept for model replay (the
transports of botocore, requests and aiohttp: :mod:`._botocore`, :mod:`._requests`,
:mod:`._aiohttp`, through
:func:`recording_target` and :func:`keep`).

Every supported framework reaches its model through the OpenAI or Anthropic SDK (or ``ollama``),
and those send through ``httpx`` (``openai`` 3.x and ``anthropic`` 2.x: ``httpx2``). At the
transport (``HTTPTransport.handle_request``, ``AsyncHTTPTransport.handle_async_request``) the
request is final (body encoded, headers set) and the response is the bytes off the wire, before
the client decodes them: what is kept here can be answered again byte for byte, whatever parses it.

Recording (checkpoint tier only): the request (method, URL and headers without credentials, body)
and the response (status, headers, body as the chunks the transport yielded, in order) are handed
to the session recorder as the ``http_exchanges`` content of the span that made the request (the
model span; else the agent or tool span: never an HTTP span, which ends before a streamed body is
read). The body still streams to the client chunk by chunk; what is kept is capped per exchange
(``AGENT_TRACE_EXCHANGE_MAX_BYTES``): past the cap the body is not kept (its size is) and the
exchange is marked ``truncated`` (such an exchange cannot be replayed).

Replaying: while a player is set (:mod:`otel_agent_trace.model_replay`), every request goes to
it instead of the network; it answers from the recording, sends to a live endpoint, or raises.
"""

from __future__ import annotations

import base64
import itertools
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import trace
from wrapt import register_post_import_hook

from otel_agent_trace._internal import guard, sink
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.settings import TIER_CHECKPOINT, TIER_TRACE, get_settings

from . import _span

CONTENT_KEY = "http_exchanges"
PATCHES = Patches("agent_trace_http_exchange")
# (module, dotted method, async)
TRANSPORTS = (
    ("httpx", "HTTPTransport.handle_request", False),
    ("httpx", "AsyncHTTPTransport.handle_async_request", True),
    ("httpx2", "HTTPTransport.handle_request", False),
    ("httpx2", "AsyncHTTPTransport.handle_async_request", True),
)
# Transports of other clients, each in a module of ours: (the client's module, ours)
OTHER_TRANSPORTS = (
    ("botocore.httpsession", "_botocore"),
    ("requests.adapters", "_requests"),
    ("aiohttp.client", "_aiohttp"),
    ("dspy._vendor.lm15.transports._sync", "_lm15"),  # DSPy 3.4's native engine
    ("dspy._vendor.lm15.transports._async", "_lm15"),
)
# Request headers never kept (credentials); response headers that set them.
_SECRET_WORDS = ("auth", "key", "token", "secret", "cookie", "password", "credential", "signature")

_users: set[str] = set()
_seq = itertools.count(1)


class _Exchanges(list):  # type: ignore[type-arg]
    """The exchanges of one span, as handed to the recorder (a list it serializes as is)."""

    __slots__ = ("owner", "__weakref__")


# span id → its exchanges while the recorder holds them (a retry within the same call appends to
# the list the recorder has); weak, so a written span's exchanges are not kept alive here.
_lists: weakref.WeakValueDictionary[int, _Exchanges] = weakref.WeakValueDictionary()


def install(user: str) -> None:
    """Wrap the transports (now if imported, else when they are); ``user`` names who needs it."""
    first = not _users
    _users.add(user)
    if first:
        PATCHES.start()
        for module_name in dict.fromkeys(m for m, _p, _a in TRANSPORTS):
            register_post_import_hook(_wrap_module, module_name)
        for module_name, _ours in OTHER_TRANSPORTS:
            register_post_import_hook(_wrap_other, module_name)


def uninstall(user: str) -> None:
    _users.discard(user)
    if not _users:
        PATCHES.stop()


def _wrap_module(module: Any) -> None:
    if not PATCHES.on:
        return
    for module_name, dotted, is_async in TRANSPORTS:
        if module_name == module.__name__:
            PATCHES.wrap(module, dotted, (_async_wrapper if is_async else _sync_wrapper)(module))


def _wrap_other(module: Any) -> None:
    if not PATCHES.on:
        return
    import importlib

    for module_name, ours in OTHER_TRANSPORTS:
        if module_name == module.__name__:
            importlib.import_module(f"{__package__}.{ours}").wrap(PATCHES, module)


# --- the wrappers ------------------------------------------------------------------------------


def _request_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else kwargs["request"]


def _sync_wrapper(module: Any) -> Callable[..., Any]:
    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        player = _replay.player
        if player is None and sink._active is None:
            return wrapped(*args, **kwargs)
        request = _request_of(args, kwargs)
        keep = recording_target(request.url)
        if player is not None:
            response = player.answer(module, request, wrapped)
        else:
            response = wrapped(*args, **kwargs)
        if keep is not None:
            return _keep(module, keep, request, response, is_async=False)
        return response

    return wrapper


def _async_wrapper(module: Any) -> Callable[..., Any]:
    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        player = _replay.player
        if player is None and sink._active is None:
            return wrapped(*args, **kwargs)
        return _run_async(module, wrapped, player, args, kwargs)

    return wrapper


async def _run_async(module: Any, wrapped: Any, player: Any, args: Any, kwargs: Any) -> Any:
    request = _request_of(args, kwargs)
    keep = recording_target(request.url)
    if player is not None:
        response = await player.answer_async(module, request, wrapped)
    else:
        response = await wrapped(*args, **kwargs)
    if keep is not None:
        return _keep(module, keep, request, response, is_async=True)
    return response


def own_request(url: str) -> bool:
    """Our own I/O, or a request to the exporter's endpoint: never kept, never answered (the
    clients hooked outside ``httpx``: requests, aiohttp, lm15)."""
    return bool(getattr(guard._local, "own_io", 0)) or bool(
        _span._exporter_urls and url.startswith(_span._exporter_urls)
    )


def on_live_origin(player: Any, url: str) -> str:
    """``url`` moved to the replay's ``live_url`` origin, path and query kept: a request the
    recording does not answer, sent on (``--on-divergence live``)."""
    base = urlsplit(player.live_url or "")
    return urlunsplit(urlsplit(url)._replace(scheme=base.scheme, netloc=base.netloc))


# --- recording ---------------------------------------------------------------------------------


def recording_target(url: Any) -> tuple[Any, Any] | None:
    """``(recorder, span)`` the exchange is kept under, or ``None`` (no checkpoint tier, no span,
    our own I/O, or the trace tier would get a preview of it)."""
    rec = sink._active
    if rec is None or getattr(guard._local, "own_io", 0):
        return None
    try:
        settings = getattr(rec, "settings", None)  # a recorder of ours (not a stand-in)
        tiers = settings.tiers if settings is not None else ()
        if TIER_CHECKPOINT not in tiers:
            return None
        # The trace tier must never see an exchange: kept only where the recorder keeps this
        # content key out of it (see docs/model-replay.md).
        if TIER_TRACE in tiers and CONTENT_KEY not in getattr(rec, "CHECKPOINT_ONLY_CONTENT", ()):
            return None
        span = trace.get_current_span()
        if not span.is_recording():
            return None
        span = _holder(span)
        from . import _span

        if _span._exporter_urls and str(url).startswith(_span._exporter_urls):
            return None
    except Exception as exc:
        internal_error("choosing where an HTTP exchange is kept", exc)
        return None
    return rec, span


def _holder(span: Any) -> Any:
    """The span an exchange is kept under: an HTTP client span ends when the response headers
    arrive, before a streamed body is read, so its (local) parent keeps it — the model span, or
    the agent or tool span that made the request. The recorder needs only the span's id."""
    attrs = getattr(span, "attributes", None) or {}
    parent = getattr(span, "parent", None)
    is_http = "http.request.method" in attrs and "gen_ai.operation.name" not in attrs
    if is_http and parent is not None and not parent.is_remote:
        return trace.NonRecordingSpan(parent)
    return span


def _is_secret(name: str) -> bool:
    lower = name.lower()
    return any(word in lower for word in _SECRET_WORDS)


def url_without_secrets(url: str) -> str:
    """``url`` without user info and without query parameters named like credentials
    (``?key=…``, ``?api_key=…``): the same URL when it has neither."""
    if "@" not in url and "?" not in url:
        return url
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    changed = False
    netloc = parts.netloc
    if "@" in netloc:
        netloc, changed = netloc.rpartition("@")[2], True
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not _is_secret(k)]
        if len(kept) != len(pairs):
            query, changed = urlencode(kept), True
    return urlunsplit(parts._replace(netloc=netloc, query=query)) if changed else url


def headers_of(headers: Any) -> list[list[str]]:
    """Headers as ``[name, value]`` pairs in order, credentials left out."""
    out = []
    for raw_name, raw_value in headers.raw:
        name = raw_name.decode("latin-1")
        if not _is_secret(name):
            out.append([name, raw_value.decode("latin-1")])
    return out


def body_value(data: bytes) -> Any:
    """Bytes as JSON: text when they are UTF-8, else ``{"base64": ...}``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def body_bytes(value: Any) -> bytes:
    """The inverse of :func:`body_value`."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and isinstance(value.get("base64"), str):
        return base64.b64decode(value["base64"])
    return b""


def request_body(request: Any) -> bytes | None:
    """The request's body, or ``None`` when it is a stream not read yet (never read here)."""
    content = getattr(request, "_content", None)
    if isinstance(content, bytes):
        return content
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)


class _Kept:
    """One exchange being kept: the response body is added chunk by chunk as the client reads it."""

    __slots__ = ("record", "chunks", "size", "cap", "expected")

    def __init__(self, record: dict[str, Any], size: int, cap: int, expected: int | None):
        self.record = record
        self.chunks: list[Any] = record["response"]["chunks"]
        self.size = size
        self.cap = cap
        self.expected = expected  # content-length: complete once read, even if never read past

    def add(self, chunk: bytes) -> None:
        try:
            self._add(chunk)
        except Exception as exc:  # never into the agent's stream
            internal_error("keeping a chunk of an HTTP exchange", exc)

    def _add(self, chunk: bytes) -> None:
        response = self.record["response"]
        response["bytes"] += len(chunk)
        if self.expected is not None and response["bytes"] >= self.expected:
            response["complete"] = True
        if response["truncated"]:
            return
        self.size += len(chunk)
        if self.size > self.cap:
            response["truncated"] = True
            self.chunks.clear()  # what an exchange past the cap keeps: its sizes only
            return
        self.chunks.append(body_value(chunk))

    def done(self) -> None:
        self.record["response"]["complete"] = True


def _keep(module: Any, target: tuple[Any, Any], request: Any, response: Any, *, is_async: bool) -> Any:
    """Hand the exchange to the recorder now (the span may end before the body is read: then
    what was read by then is written, ``complete: false``) and tee the body as it streams."""
    try:
        kept = keep(
            target,
            method=_text(request.method),
            url=str(request.url),
            headers=headers_of(request.headers),
            body=request_body(request),
            status=response.status_code,
            http_version=_text(response.extensions.get("http_version")),
            reason=_text(response.extensions.get("reason_phrase")),
            response_headers=headers_of(response.headers),
        )
        if kept is not None:
            response.stream = _tee_type(module, is_async)(response.stream, kept)
    except Exception as exc:
        internal_error("keeping an HTTP exchange", exc)
    return response


def keep(
    target: tuple[Any, Any],
    *,
    method: str | None,
    url: str,
    headers: list[list[str]],
    body: bytes | None,
    status: int,
    http_version: str | None,
    reason: str | None,
    response_headers: list[list[str]],
) -> _Kept | None:
    """An exchange of any HTTP client's transport, handed to the recorder under ``target`` (from
    :func:`recording_target`) before its body is read; the transport feeds the body to the
    returned :class:`_Kept` chunk by chunk (``add``, then ``done``). ``None`` on an internal error."""
    rec, span = target
    try:
        cap = get_settings().exchange_max_bytes
        record: dict[str, Any] = {
            "seq": next(_seq),
            "ts": time.time_ns(),
            "request": {
                "method": method,
                "url": url_without_secrets(url),
                "headers": headers,
                "body": body_value(body) if body is not None and len(body) <= cap else None,
                "body_bytes": None if body is None else len(body),
            },
            "response": {
                "status": status,
                "http_version": http_version,
                "reason": reason,
                "headers": response_headers,
                "chunks": [],
                "bytes": 0,
                "complete": False,
                "truncated": False,
            },
        }
        length = next((v for k, v in response_headers if k.lower() == "content-length"), None)
        kept = _Kept(record, len(body or b""), cap, int(length) if length and length.isdigit() else None)
        sid = span.get_span_context().span_id
        exchanges = _lists.get(sid)
        if exchanges is not None and exchanges.owner == id(rec):
            exchanges.append(record)  # a retry within the same call: the recorder holds this list
        else:
            exchanges = _Exchanges([record])
            exchanges.owner = id(rec)
            _lists[sid] = exchanges
            rec.attach_content(span, {CONTENT_KEY: exchanges})
        return kept
    except Exception as exc:
        internal_error("keeping an HTTP exchange", exc)
        return None


_tee_types: dict[tuple[str, bool], type] = {}


def _tee_type(module: Any, is_async: bool) -> type:
    """The stream class that passes each chunk on and keeps a copy (a subclass of the module's
    own stream base class, which the client checks)."""
    key = (module.__name__, is_async)
    found = _tee_types.get(key)
    if found is not None:
        return found
    if is_async:

        class AsyncTee(module.AsyncByteStream):  # type: ignore[name-defined,misc]
            def __init__(self, inner: Any, kept: _Kept):
                self._inner = inner
                self._kept = kept

            async def __aiter__(self) -> AsyncIterator[bytes]:
                kept = self._kept
                async for chunk in self._inner:
                    kept.add(chunk)
                    yield chunk
                kept.done()

            async def aclose(self) -> None:
                await self._inner.aclose()

        found = AsyncTee
    else:

        class Tee(module.SyncByteStream):  # type: ignore[name-defined,misc]
            def __init__(self, inner: Any, kept: _Kept):
                self._inner = inner
                self._kept = kept

            def __iter__(self) -> Iterator[bytes]:
                kept = self._kept
                for chunk in self._inner:
                    kept.add(chunk)
                    yield chunk
                kept.done()

            def close(self) -> None:
                self._inner.close()

        found = Tee
    _tee_types[key] = found
    return found


__all__ = ["CONTENT_KEY", "install", "uninstall", "body_value", "body_bytes", "request_body"]
