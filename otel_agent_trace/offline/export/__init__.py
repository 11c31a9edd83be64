"""Uploading a recorded session after the fact: to any OTLP backend (HTTP or gRPC), or to files
a viewer loads (OTLP/JSON lines, Jaeger JSON).

Spans keep their recorded trace ids, span ids, parents, times, kinds, events and statuses, so a
span in the backend is the same span as in the session file. Everything is redacted as the
shareable tier is; spans the recording never saw end are sent with ``agent_trace.unfinished``.
Sending the same file twice sends the same ids again (no state is kept anywhere): a backend that
keys spans by id, as Tempo's and Phoenix's storage do, keeps one copy.

Imports no capture code and no ``opentelemetry.sdk``: messages are built with the
``opentelemetry.proto`` classes and sent with ``requests`` or ``grpc``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO

from .files import jaeger_json, otlp_json, write_otlp_json
from .otlp import build_requests
from .send import PROTOCOLS, ExportFailed, Sender
from .spans import UNFINISHED_ATTRIBUTE, ExportSpan, SessionSpans, read_session_spans

__all__ = [
    "PROTOCOLS",
    "UNFINISHED_ATTRIBUTE",
    "ExportFailed",
    "ExportResult",
    "ExportSpan",
    "Sender",
    "SessionSpans",
    "build_requests",
    "export_session",
    "jaeger_json",
    "otlp_json",
    "read_session_spans",
    "write_otlp_json",
]


@dataclass
class ExportResult:
    """What one export did: spans sent (and how many of them the backend said it rejected)."""

    session: SessionSpans
    sent: int
    rejected: int
    unfinished: int


def export_session(
    path: str | os.PathLike[str],
    endpoint: str,
    *,
    protocol: str = "http/protobuf",
    headers: Mapping[str, str] | None = None,
    service_name: str | None = None,
    batch_size: int = 512,
    timeout: float = 10.0,
    retries: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> ExportResult:
    """Send one session (JSONL with its child files, or ZIP) to an OTLP endpoint.

    Raises :class:`ExportFailed` when the backend refuses a batch or stays unreachable after
    ``retries``; the spans of earlier batches were sent (``exc.sent`` says how many).
    """
    session = read_session_spans(path)
    sender = Sender(endpoint, protocol, headers, timeout=timeout, retries=retries)
    total = len(session.spans)
    sent = 0
    try:
        if progress:
            progress(0, total)
        for request, count in build_requests(session, service_name=service_name, max_spans=batch_size):
            try:
                sender.send(request)
            except ExportFailed as exc:
                exc.sent = sent  # type: ignore[attr-defined]
                exc.total = total  # type: ignore[attr-defined]
                raise
            sent += count
            if progress:
                progress(sent, total)
    finally:
        sender.close()
    return ExportResult(session, sent, sender.rejected_spans, sum(s.unfinished for s in session.spans))


def write_file(
    path: str | os.PathLike[str], out: IO[str], fmt_name: str, *, service_name: str | None = None
) -> SessionSpans:
    """Write one session as ``otlp-json`` (one request per line) or ``jaeger-json``."""
    import json

    session = read_session_spans(path)
    if fmt_name == "otlp-json":
        write_otlp_json(build_requests(session, service_name=service_name), out)
    elif fmt_name == "jaeger-json":
        json.dump(jaeger_json(session, service_name), out, ensure_ascii=False)
        out.write("\n")
    else:
        raise ValueError(f"unknown format {fmt_name!r} (otlp-json or jaeger-json)")
    return session
