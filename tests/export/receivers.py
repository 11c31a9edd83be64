"""Real OTLP receivers on 127.0.0.1, HTTP (``http.server``) and gRPC (``grpc.server``), that keep
each request with its headers and answer with an ``ExportTraceServiceResponse`` (a partial
success when told to reject spans)."""

from __future__ import annotations

import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _count(request: ExportTraceServiceRequest) -> int:
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


class Receiver:
    """Keeps ``(headers, request)`` of each export; rejects the first ``reject`` spans of each
    request it gets (at most what it holds) with ``message``."""

    url: str

    def __init__(self, reject: int = 0, message: str = "") -> None:
        self.reject = reject
        self.message = message
        self.requests: list[tuple[dict[str, str], ExportTraceServiceRequest]] = []

    def answer(
        self, headers: dict[str, str], request: ExportTraceServiceRequest
    ) -> ExportTraceServiceResponse:
        self.requests.append((headers, request))
        spans = _count(request)
        rejected = min(self.reject, spans)
        if not rejected and not self.message:
            return ExportTraceServiceResponse()
        partial = ExportTracePartialSuccess(rejected_spans=rejected, error_message=self.message)
        return ExportTraceServiceResponse(partial_success=partial)

    @property
    def spans(self) -> int:
        return sum(_count(request) for _, request in self.requests)

    def close(self) -> None:
        raise NotImplementedError


class HttpReceiver(Receiver):
    def __init__(self, reject: int = 0, message: str = "") -> None:
        super().__init__(reject, message)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer = outer.answer(headers, ExportTraceServiceRequest.FromString(body))
                payload = answer.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class GrpcReceiver(Receiver):
    def __init__(self, reject: int = 0, message: str = "") -> None:
        super().__init__(reject, message)
        outer = self

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
                return outer.answer(dict(context.invocation_metadata()), request)

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.server.stop(None)


RECEIVERS = {"http/protobuf": HttpReceiver, "grpc": GrpcReceiver}
