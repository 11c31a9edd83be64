"""Sending OTLP requests to a backend over HTTP (protobuf) or gRPC, with retries.

Retryable answers (HTTP 429/502/503/504, gRPC UNAVAILABLE, RESOURCE_EXHAUSTED, …, or no
connection) are retried with exponential backoff; anything else is a refusal, raised at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import requests
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PROTOCOLS = ("http/protobuf", "grpc")
HTTP_RETRYABLE = frozenset({408, 429, 502, 503, 504})
TRACES_PATH = "/v1/traces"


class ExportFailed(Exception):
    """The backend refused a batch, or could not be reached after the retries."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


def http_url(endpoint: str) -> str:
    """The traces URL for an endpoint: a base URL gets ``/v1/traces``; a full URL is kept."""
    if "://" not in endpoint:
        endpoint = f"http://{endpoint}"
    parts = urlsplit(endpoint)
    if parts.path.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def grpc_target(endpoint: str) -> tuple[str, bool]:
    """``(host:port, secure)`` for a gRPC endpoint (``http://`` means plaintext, as in OTel)."""
    if "://" not in endpoint:
        return endpoint, False
    parts = urlsplit(endpoint)
    return parts.netloc, parts.scheme == "https"


class Sender:
    """Sends requests to one endpoint; ``send`` retries and raises :class:`ExportFailed`."""

    def __init__(
        self,
        endpoint: str,
        protocol: str = "http/protobuf",
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = 10.0,
        retries: int = 5,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")
        self.endpoint = endpoint
        self.protocol = protocol
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self.rejected_spans = 0
        self._session: requests.Session | None = None
        self._channel = None
        self._stub = None

    @property
    def target(self) -> str:
        return http_url(self.endpoint) if self.protocol == "http/protobuf" else grpc_target(self.endpoint)[0]

    def send(self, request: ExportTraceServiceRequest) -> None:
        payload = request.SerializeToString()
        attempt = 0
        while True:
            try:
                self._send_once(request, payload)
                return
            except ExportFailed as exc:
                if exc.refused or attempt >= self.retries:
                    raise
            attempt += 1
            self._sleep(self.backoff * 2 ** (attempt - 1))

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
        if self._channel is not None:
            self._channel.close()

    # --- one attempt ------------------------------------------------------------------------

    def _send_once(self, request: ExportTraceServiceRequest, payload: bytes) -> None:
        if self.protocol == "http/protobuf":
            self._http(payload)
        else:
            self._grpc(request)

    def _http(self, payload: bytes) -> None:
        if self._session is None:
            self._session = requests.Session()
        url = http_url(self.endpoint)
        headers = {"Content-Type": "application/x-protobuf", **self.headers}
        try:
            resp = self._session.post(url, data=payload, headers=headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise ExportFailed(f"cannot reach {url}: {_short(exc)}", refused=False) from None
        if resp.ok:
            self._note_partial(resp.content)
            return
        body = resp.text.strip().replace("\n", " ")[:300]
        answer = f"{url} answered HTTP {resp.status_code} {resp.reason or ''}".rstrip()
        raise ExportFailed(
            answer + (f": {body}" if body else ""),
            refused=resp.status_code not in HTTP_RETRYABLE,
        )

    def _grpc(self, request: ExportTraceServiceRequest) -> None:
        import grpc
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

        if self._stub is None:
            target, secure = grpc_target(self.endpoint)
            self._channel = (
                grpc.secure_channel(target, grpc.ssl_channel_credentials())
                if secure
                else grpc.insecure_channel(target)
            )
            self._stub = TraceServiceStub(self._channel)
        metadata = [(k.lower(), v) for k, v in self.headers.items()]
        try:
            response = self._stub.Export(request, metadata=metadata, timeout=self.timeout)
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            details = exc.details() if hasattr(exc, "details") else str(exc)
            retryable = code in _grpc_retryable()
            raise ExportFailed(
                f"{self.target} answered gRPC {getattr(code, 'name', code)}: {details}", refused=not retryable
            ) from None
        self._note_partial(response)

    def _note_partial(self, response: bytes | ExportTraceServiceResponse) -> None:
        if isinstance(response, bytes):
            parsed = ExportTraceServiceResponse()
            try:
                parsed.ParseFromString(response)
            except DecodeError:  # a body that is not an OTLP response: nothing to count
                return
            response = parsed
        if response.HasField("partial_success"):
            self.rejected_spans += int(response.partial_success.rejected_spans)


def _grpc_retryable() -> frozenset:
    import grpc

    return frozenset(
        {
            grpc.StatusCode.CANCELLED,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.ABORTED,
            grpc.StatusCode.OUT_OF_RANGE,
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DATA_LOSS,
        }
    )


def _short(exc: BaseException) -> str:
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused"
    if "timed out" in text.lower():
        return "timed out"
    return text[:200]
