"""The wrappers of each HTTP client. Every wrapper makes at most one span (see :mod:`._span`) and
returns or raises exactly what the client did."""

from __future__ import annotations

from typing import Any

from otel_agent_trace._internal import sink

from . import _span
from ._span import begin


def _status_of(exc: BaseException) -> Any:
    """The status code an exception carries (``HTTPError.code``, aiohttp's ``status``)."""
    for attr in ("code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _start(extract: Any, instance: Any, args: Any, kwargs: Any, current: bool = True) -> Any:
    """The request's span, or ``None``: no session (one global read; and, once a model call of
    ours ran, whether one is in progress: its facts go on its span), or arguments we cannot read."""
    if not _span.PATCHES.on or (sink._active is None and _span.model_call_span() is None):
        return None
    try:
        method, url = extract(instance, args, kwargs)
    except Exception:  # the caller's odd arguments: the client itself raises on them, unrecorded
        return None
    return begin(method, url, current=current)


def _sync(extract: Any, status: Any) -> Any:
    """A wrapper around a call that sends one request and returns its response."""

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = _start(extract, instance, args, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        try:
            response = wrapped(*args, **kwargs)
        except Exception as exc:
            call.end(_status_of(exc), exc)
            raise
        except BaseException:
            call.end()
            raise
        call.end(status(response))
        return response

    return wrapper


def _async(extract: Any, status: Any) -> Any:
    async def run(wrapped: Any, args: Any, kwargs: Any, call: Any) -> Any:
        try:
            response = await wrapped(*args, **kwargs)
        except Exception as exc:
            call.end(_status_of(exc), exc)
            raise
        except BaseException:
            call.end()
            raise
        call.end(status(response))
        return response

    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = _start(extract, instance, args, kwargs, current=False)
        if call is None:
            return wrapped(*args, **kwargs)
        return _attached(run(wrapped, args, kwargs, call), call)  # current once awaited

    return wrapper


async def _attached(coro: Any, call: Any) -> Any:
    call.enter()
    return await coro


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


# --- requests / httpx / httpx2: Session.send(request) / Client.send(request) ------------------


def _request_object(instance: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    request = _arg(args, kwargs, 0, "request")
    return request.method, request.url


def _status_code(response: Any) -> Any:
    return getattr(response, "status_code", None)


# --- urllib.request: OpenerDirector.open(fullurl, data=None) -----------------------------------


def _urllib_request(instance: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    fullurl = _arg(args, kwargs, 0, "fullurl")
    data = _arg(args, kwargs, 1, "data")
    if isinstance(fullurl, str):
        return ("POST" if data is not None else "GET"), fullurl
    # Request.get_method() as it will be once OpenerDirector.open has set ``data``
    has_data = data is not None or fullurl.data is not None
    return getattr(fullurl, "method", None) or ("POST" if has_data else "GET"), fullurl.full_url


def _urllib_status(response: Any) -> Any:
    return getattr(response, "status", None) or getattr(response, "code", None)


# --- http.client: request() starts, getresponse() ends ----------------------------------------

_PENDING = "_oat_http_call"


def _connection_url(conn: Any, url: str) -> str:
    if "://" in url:
        return url
    import http.client

    scheme = "https" if isinstance(conn, http.client.HTTPSConnection) else "http"
    default = 443 if scheme == "https" else 80
    host = conn.host if ":" not in conn.host else f"[{conn.host}]"
    port = "" if conn.port == default else f":{conn.port}"
    return f"{scheme}://{host}{port}{url}"


def _http_client_target(instance: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    return _arg(args, kwargs, 0, "method"), _connection_url(instance, _arg(args, kwargs, 1, "url", "/"))


def _http_client_request(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    call = _start(_http_client_target, instance, args, kwargs)
    if call is None:
        return wrapped(*args, **kwargs)
    try:
        result = wrapped(*args, **kwargs)
    except Exception as exc:
        call.end(None, exc)
        raise
    finally:
        call.detach()  # not current between request() and getresponse()
    previous = instance.__dict__.pop(_PENDING, None)
    if previous is not None:
        previous.end()
    instance.__dict__[_PENDING] = call
    return result


def _http_client_getresponse(
    wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    call = instance.__dict__.pop(_PENDING, None)
    if call is None:
        return wrapped(*args, **kwargs)
    try:
        response = wrapped(*args, **kwargs)
    except Exception as exc:
        call.end(None, exc)
        raise
    call.end(getattr(response, "status", None))
    return response


# --- urllib3: HTTPConnectionPool.urlopen(method, url) -----------------------------------------


def _urllib3_request(instance: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    method = _arg(args, kwargs, 0, "method")
    url = _arg(args, kwargs, 1, "url", "/")
    if "://" not in url:
        default = 443 if instance.scheme == "https" else 80
        port = "" if instance.port in (None, default) else f":{instance.port}"
        url = f"{instance.scheme}://{instance.host}{port}{url}"
    return method, url


def _status_attr(response: Any) -> Any:
    return getattr(response, "status", None)


# --- aiohttp: ClientSession._request(method, str_or_url) --------------------------------------


def _aiohttp_request(instance: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    url = _arg(args, kwargs, 1, "str_or_url")
    base = getattr(instance, "_base_url", None)
    if base is not None and isinstance(url, str) and "://" not in url:
        url = str(base.join(type(base)(url)))
    return _arg(args, kwargs, 0, "method"), url


# (client name, module, dotted attribute, wrapper factory)
CLIENTS: tuple[tuple[str, str, str, Any], ...] = (
    ("requests", "requests.sessions", "Session.send", lambda: _sync(_request_object, _status_code)),
    ("httpx", "httpx", "Client.send", lambda: _sync(_request_object, _status_code)),
    ("httpx", "httpx", "AsyncClient.send", lambda: _async(_request_object, _status_code)),
    ("httpx2", "httpx2", "Client.send", lambda: _sync(_request_object, _status_code)),
    ("httpx2", "httpx2", "AsyncClient.send", lambda: _async(_request_object, _status_code)),
    ("urllib", "urllib.request", "OpenerDirector.open", lambda: _sync(_urllib_request, _urllib_status)),
    ("http.client", "http.client", "HTTPConnection.request", lambda: _http_client_request),
    ("http.client", "http.client", "HTTPConnection.getresponse", lambda: _http_client_getresponse),
    (
        "urllib3",
        "urllib3.connectionpool",
        "HTTPConnectionPool.urlopen",
        lambda: _sync(_urllib3_request, _status_attr),
    ),
    ("aiohttp", "aiohttp", "ClientSession._request", lambda: _async(_aiohttp_request, _status_attr)),
)
