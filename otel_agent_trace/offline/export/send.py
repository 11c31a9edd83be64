"""Sending spans with the OpenTelemetry OTLP exporters (``opentelemetry-exporter-otlp-proto-http``
or ``-grpc``): their retries and backoff (``Retry-After``, gRPC ``RetryInfo``) within the timeout,
compression, TLS and client certificates, headers, all as ``OTEL_EXPORTER_OTLP_*`` set them.

What the exporters add here: an endpoint that accepts no connection fails at once, with its
reason, rather than after the exporter's retries (one TCP connection is tried first, unless a
proxy is in the way); what the exporter logs (a retry, the reason of a failure) is said on
standard error as it happens, never dropped; headers merge the same way for both protocols (those
of ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, else ``OTEL_EXPORTER_OTLP_HEADERS``, then the given ones,
which win per key: the HTTP exporter's own rule, which the gRPC exporter does not follow); and a
receiver's ``partial_success`` (spans it rejected, or a warning), which the exporters drop, is
counted (:class:`Rejections`).
"""

from __future__ import annotations

import logging
import os
import socket
import urllib.request
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .rejections import Rejections

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter

PROTOCOLS = ("http/protobuf", "grpc")
TRACES_PATH = "/v1/traces"
DEFAULT_TIMEOUT = 10.0
_EXPORTER_LOGGER = "opentelemetry.exporter"


class ExportFailed(Exception):
    """The backend refused a batch, or could not be reached within the timeout."""

    def __init__(self, message: str, *, refused: bool, sent: int = 0) -> None:
        super().__init__(message)
        self.refused = refused
        self.sent = sent


def http_url(endpoint: str) -> str:
    """The traces URL for an endpoint: a base URL gets ``/v1/traces``; a full URL is kept."""
    endpoint = with_scheme(endpoint)
    if urlsplit(endpoint).path.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def with_scheme(endpoint: str) -> str:
    """``host:port`` is plaintext (``http://``); ``https://`` is TLS."""
    return endpoint if "://" in endpoint else f"http://{endpoint.lstrip('/')}"


def env_endpoint(protocol: str) -> str | None:
    """The endpoint ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as it is) or
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL) names, if any."""
    own = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if own:
        return own
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not base:
        return None
    return http_url(base) if protocol == "http/protobuf" else base


def env_protocol() -> str | None:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def resolved_timeout(timeout: float | None) -> float:
    """``timeout``, else ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT``
    (seconds, as the Python exporters read them), else 10."""
    if timeout is not None:
        return timeout
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                return float(raw)
            except ValueError:
                break
    return DEFAULT_TIMEOUT


def merged_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` (else ``OTEL_EXPORTER_OTLP_HEADERS``), then
    ``headers`` over them, key by key; keys lower-case (gRPC metadata must be, HTTP's are not
    case-sensitive)."""
    from opentelemetry.util.re import parse_env_headers

    own = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
    raw = own or os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "")
    out = {k.lower(): v for k, v in parse_env_headers(raw, liberal=True).items()}
    out.update({k.lower(): v for k, v in (headers or {}).items()})
    return out


def make_exporter(
    endpoint: str,
    protocol: str,
    headers: Mapping[str, str] | None,
    timeout: float,
    rejections: Rejections | None = None,
) -> SpanExporter:
    """The SDK's OTLP span exporter for ``endpoint``; what is not given comes from the
    ``OTEL_EXPORTER_OTLP_*`` variables, as for any exporter (headers: :func:`merged_headers`).
    ``rejections`` counts what the receiver says in ``partial_success``."""
    rejections = rejections if rejections is not None else Rejections()
    if protocol == "grpc":
        from ._grpc import counting_exporter

        grpc_headers = tuple(merged_headers(headers).items()) or None
        return counting_exporter(with_scheme(endpoint), grpc_headers, timeout, rejections)
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

        return Http(
            endpoint=http_url(endpoint),
            headers=merged_headers(headers),
            timeout=timeout,
            session=_counting_session(rejections),
        )
    raise ValueError(f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")


def _counting_session(rejections: Rejections) -> Any:
    """A ``requests`` session whose answers are read for ``partial_success`` (a response hook),
    and that keeps the CA the OTLP settings name: requests otherwise lets ``REQUESTS_CA_BUNDLE`` /
    ``CURL_CA_BUNDLE`` replace a session's ``verify`` on every request, so
    ``OTEL_EXPORTER_OTLP_CERTIFICATE`` would be ignored wherever those are set. ``None`` (the
    exporter's own session, its partial successes unread) when a credential provider gives the
    session."""
    providers = (
        "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
        "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    )
    if any(os.environ.get(n) for n in providers):
        return None
    named = any(
        os.environ.get(n) for n in ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE")
    )
    import requests

    class OwnCA(requests.Session):
        def merge_environment_settings(self, url, proxies, stream, verify, cert):  # type: ignore[no-untyped-def]
            settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
            settings["verify"] = self.verify  # the exporter's: the CA the OTLP settings name
            return settings

    def count(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if response.status_code == 200:
            rejections.add_body(response.content)

    session = OwnCA() if named else requests.Session()
    session.hooks["response"].append(count)
    return session


def target_of(endpoint: str, protocol: str) -> tuple[str, int]:
    """The host and port a connection to ``endpoint`` goes to."""
    parts = urlsplit(with_scheme(endpoint))
    default = 443 if parts.scheme == "https" else 4317 if protocol == "grpc" else 4318
    try:
        port = parts.port or default
    except ValueError:
        raise ExportFailed(f"{endpoint}: not a valid endpoint (bad port)", refused=True) from None
    if not parts.hostname:
        raise ExportFailed(f"{endpoint}: not a valid endpoint (no host)", refused=True)
    return parts.hostname, port


def _proxied(endpoint: str, protocol: str) -> bool:
    url = with_scheme(endpoint)
    host = urlsplit(url).hostname or ""
    if protocol == "grpc":
        names = ("grpc_proxy", "https_proxy", "http_proxy")
        proxy = any(os.environ.get(n) or os.environ.get(n.upper()) for n in names)
    else:
        proxy = urlsplit(url).scheme in urllib.request.getproxies()
    return proxy and not urllib.request.proxy_bypass(host)


def check_reachable(endpoint: str, protocol: str, timeout: float) -> None:
    """Raise :class:`ExportFailed` at once when no connection to the endpoint can be made."""
    if _proxied(endpoint, protocol):
        return  # the proxy, not the endpoint, takes the connection
    host, port = target_of(endpoint, protocol)
    try:
        with socket.create_connection((host, port), timeout=max(timeout, 0.1)):
            pass
    except ConnectionRefusedError:
        raise ExportFailed(f"cannot reach {host}:{port}: connection refused", refused=False) from None
    except TimeoutError:
        raise ExportFailed(
            f"cannot reach {host}:{port}: no answer within {timeout:g} s", refused=False
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ExportFailed(f"cannot reach {host}:{port}: {reason}", refused=False) from None


class _Said(logging.Handler):
    """The exporter's log records: each said through ``say``, errors kept for the failure."""

    def __init__(self, say: Callable[[str], None] | None) -> None:
        super().__init__(logging.WARNING)
        self.say = say
        self.errors: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a record that does not format: its template says enough
            message = str(record.msg)
        if record.levelno >= logging.ERROR:
            self.errors.append(message)
        elif self.say is not None:
            self.say(message)


@contextmanager
def _exporter_log(say: Callable[[str], None] | None) -> Generator[_Said, None, None]:
    logger = logging.getLogger(_EXPORTER_LOGGER)
    handler = _Said(say)
    propagate, level = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False  # said here once, not again by the last-resort handler
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = propagate, level


class Sender:
    """Sends batches of spans through one SDK exporter; ``send`` raises :class:`ExportFailed`."""

    def __init__(
        self,
        endpoint: str,
        protocol: str = "http/protobuf",
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        note: Callable[[str], None] | None = None,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")
        self.endpoint = endpoint
        self.protocol = protocol
        self.timeout = resolved_timeout(timeout)
        self.note = note
        self.sent = 0
        self.rejected = Rejections()
        check_reachable(endpoint, protocol, self.timeout)
        self.exporter = make_exporter(endpoint, protocol, headers, self.timeout, self.rejected)

    @property
    def target(self) -> str:
        return http_url(self.endpoint) if self.protocol == "http/protobuf" else with_scheme(self.endpoint)

    def send(self, spans: Sequence[ReadableSpan]) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        with _exporter_log(self.note) as log:
            result = self.exporter.export(spans)
        if result is not SpanExportResult.SUCCESS:
            reason = log.errors[-1] if log.errors else "the exporter gave no reason"
            refused = not any(
                w in reason.lower() for w in ("timeout", "unavailable", "connection", "deadline")
            )
            raise ExportFailed(f"{self.target}: {reason}", refused=refused, sent=self.sent)
        self.sent += len(spans)

    def close(self) -> None:
        with _exporter_log(self.note):
            self.exporter.shutdown()


__all__ = [
    "PROTOCOLS",
    "ExportFailed",
    "Rejections",
    "Sender",
    "env_endpoint",
    "env_protocol",
    "http_url",
    "merged_headers",
]
