"""The HTTP request under a model call, recorded as attributes of the model span.

A model call of ours sends one HTTP request (more on retries). A span of its own would double
what every call exports and writes (contrib's ``openai-v2`` suppresses HTTP instrumentation
inside a model call for the same reason); its facts go on the model span instead:
``server.address``, ``server.port``, ``http.response.status_code``, the request's duration
(``agent_trace.http.duration``, seconds) and, past the first attempt, ``http.request.resend_count``.

:data:`MODEL_SPAN` holds the model span while our own model call runs with it current
(``ModelCall.activate``); the HTTP hooks (``instrumentation/system/http``) read it.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace._internal.sdk_compat import set_attributes_fast

_DEFAULT_PORTS = {"http": 80, "https": 443}
# A model call's URL (the same for every call to an endpoint) -> its server address and port.
_SERVERS: dict[str, tuple[str | None, int | None]] = {}

MODEL_SPAN: ContextVar[Any] = ContextVar("otel_agent_trace_model_span", default=None)


class ModelRequest:
    """One HTTP request under a model span: no span of its own; :meth:`end` sets its facts on
    the model span. Duck-typed like the HTTP layer's ``Call`` (``end``, ``detach``, ``enter``)."""

    __slots__ = ("span", "url", "started", "_mark", "_in_http")

    def __init__(self, span: Any, url: str, in_http: ContextVar[bool], current: bool) -> None:
        self.span = span
        self.url = url
        self._in_http = in_http
        self._mark = in_http.set(True) if current else None
        self.started = time.perf_counter_ns()

    def enter(self) -> None:
        """Mark the context as inside an HTTP client (the async path, once awaited)."""
        self._mark = self._in_http.set(True)

    def detach(self) -> None:
        if self._mark is not None:
            try:
                self._in_http.reset(self._mark)
            except ValueError:  # ended in another context (a generator finalised elsewhere)
                pass
            self._mark = None

    def end(self, status: Any = None, exc: BaseException | None = None) -> None:
        self.detach()
        try:
            self._set_facts(status)
        except Exception as err:
            internal_error("recording a model call's HTTP request", err)

    def _set_facts(self, status: Any) -> None:
        span = self.span
        if not span.is_recording():
            return
        attrs: dict[str, Any] = {semconv.HTTP_DURATION: (time.perf_counter_ns() - self.started) / 1e9}
        if status is not None:
            attrs[semconv.HTTP_RESPONSE_STATUS_CODE] = int(status)
        span_attrs = span.attributes
        if span_attrs is not None and semconv.HTTP_DURATION in span_attrs:  # a retry
            attrs[semconv.HTTP_REQUEST_RESEND_COUNT] = (
                int(span_attrs.get(semconv.HTTP_REQUEST_RESEND_COUNT, 0)) + 1
            )
        else:
            host, port = _server_of(self.url)
            if host:
                attrs[semconv.SERVER_ADDRESS] = host
            if port:
                attrs[semconv.SERVER_PORT] = port
        set_attributes_fast(span, attrs)


def _server_of(url: str) -> tuple[str | None, int | None]:
    """A URL's host and port (the scheme's default when it names none), remembered per URL."""
    found = _SERVERS.get(url)
    if found is None:
        try:
            parts = urlsplit(url)
            found = (parts.hostname or None, parts.port or _DEFAULT_PORTS.get(parts.scheme))
        except ValueError:
            found = (None, None)
        if len(_SERVERS) >= 256:
            _SERVERS.clear()
        _SERVERS[url] = found
    return found
