"""One HTTP request as one CLIENT span, whichever client (or stack of clients) sends it.

A request passes through several layers (``requests`` → ``urllib3`` → ``http.client``;
``urllib.request`` → ``http.client``): the outermost instrumented layer makes the span and marks
the context, so the layers below add nothing (one span, never two). The mark also tells the
socket hook that an HTTP client is involved. The URL is kept as it is (``url.full``); the trace
tier and the OTLP stream redact it, the checkpoint tier keeps it whole.
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_HTTP_INSTRUMENTATION_KEY
from opentelemetry.trace import SpanKind, Status, StatusCode

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._patching import Patches

from .. import _names as n
from .._common import ours, recorder

if TYPE_CHECKING:
    from otel_agent_trace.instrumentation._genai.http_facts import ModelRequest

IN_HTTP: ContextVar[bool] = ContextVar("otel_agent_trace_in_http", default=False)
# Loaded by our model calls (``_genai/model_call.py``): until one ran, no model span of ours can be
# current, and a process that makes no model call (most child processes) never imports it.
_HTTP_FACTS = "otel_agent_trace.instrumentation._genai.http_facts"
PATCHES = Patches("agent_trace_http")  # the patches, switch and tracer of agent_trace_http
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_KNOWN_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"}
)
_exporter_urls: tuple[str, ...] = ()


def configure() -> None:
    """Remember the OTLP exporter's endpoints: its requests are never the agent's."""
    global _exporter_urls
    urls = []
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        value = os.environ.get(var, "").strip()
        if value:
            urls.append(value.rstrip("/"))
    _exporter_urls = tuple(urls)


class Call:
    """A started HTTP span, current (and marked) until :meth:`end`."""

    __slots__ = ("span", "_token", "_mark")

    def __init__(self, span: Any, token: Any, mark: Any):
        self.span = span
        self._token = token
        self._mark = mark

    def detach(self) -> None:
        if self._mark is not None:
            try:
                IN_HTTP.reset(self._mark)
            except ValueError:  # ended in another context (a generator finalised elsewhere)
                pass
            self._mark = None
        if self._token is not None:
            otel_context.detach(self._token)  # logs (never raises) a token of another context
            self._token = None

    def enter(self) -> None:
        """Make the span current and mark the context (the async path, once awaited)."""
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        self._mark = IN_HTTP.set(True)

    def end(self, status: Any = None, exc: BaseException | None = None) -> None:
        self.detach()
        try:
            span = self.span
            code = int(status) if status is not None else None
            if code is not None:
                span.set_attribute(n.HTTP_RESPONSE_STATUS_CODE, code)
                if code >= 400:
                    span.set_attribute(n.ERROR_TYPE, str(code))
                    span.set_status(Status(StatusCode.ERROR))
            if exc is not None and code is None:
                span.set_attribute(n.ERROR_TYPE, type(exc).__qualname__)
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:500]))
            span.end()
        except Exception as err:
            internal_error("ending an HTTP span", err)


def model_call_span() -> Any:
    """The span of our model call in progress here, or ``None`` (one module lookup until a model
    call of ours ran)."""
    facts = sys.modules.get(_HTTP_FACTS)
    return facts.MODEL_SPAN.get() if facts is not None else None


def begin(method: Any, url: Any, *, current: bool = True) -> Call | ModelRequest | None:
    """Start the span of a request, or ``None`` (no session, nested in another client, ours).
    Under a model call of ours, no span: its facts go on the model span (:class:`ModelRequest`),
    whether or not a session records (they are the model span's own attributes: forwarded alone,
    with ``AGENT_TRACE_RECORD=false`` or the system layer off, it still names its server)."""
    if not PATCHES.on or IN_HTTP.get():
        return None
    model_span = model_call_span()
    if model_span is None:
        if sink._active is None or recorder() is None:
            return None
    elif ours():  # (an exporter's request while the model call runs: not the model's)
        return None
    if otel_context.get_value(_SUPPRESS_HTTP_INSTRUMENTATION_KEY):
        return None
    try:
        text = url if isinstance(url, str) else str(url)
        if _exporter_urls and text.startswith(_exporter_urls):
            return None
        if model_span is not None:
            return sys.modules[_HTTP_FACTS].ModelRequest(model_span, text, IN_HTTP, current)
        verb = (method.decode() if isinstance(method, bytes) else str(method or "GET")).upper()
        span = PATCHES.tracer().start_span(
            verb if verb in _KNOWN_METHODS else "HTTP",
            kind=SpanKind.CLIENT,
            attributes=attributes(verb, text),
        )
    except Exception as exc:
        internal_error("starting an HTTP span", exc)
        return None
    token = otel_context.attach(trace.set_span_in_context(span)) if current else None
    return Call(span, token, IN_HTTP.set(True) if current else None)


def attributes(method: str, url: str) -> dict[str, Any]:
    """The request's attributes, the URL as it is: redaction is the tiers' and the forwarding's
    business (the checkpoint tier keeps the real URL, the trace tier and OTLP a redacted one)."""
    attrs: dict[str, Any] = {
        n.HTTP_REQUEST_METHOD: method if method in _KNOWN_METHODS else "_OTHER",
        n.URL_FULL: url,
    }
    if method not in _KNOWN_METHODS:
        attrs["http.request.method_original"] = method
    try:
        parts = urlsplit(url)
        if parts.hostname:
            attrs[n.SERVER_ADDRESS] = parts.hostname
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        if port:
            attrs[n.SERVER_PORT] = port
    except ValueError:
        pass
    return attrs
