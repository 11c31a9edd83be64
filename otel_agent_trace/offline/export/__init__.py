"""Uploading a recorded session after the fact: to any OTLP backend (HTTP or gRPC), or to files
a viewer loads (OTLP/JSON lines, Jaeger JSON).

A session of ours (JSONL with its child files, or ZIP) is streamed; DevDuck's and DM-Code-Agent's
sessions go as the loader builds their spans (:mod:`.foreign`). Spans keep their recorded trace
ids, span ids, parents, times, kinds, events and statuses, so a span in the backend is the same
span as in the session file. Everything is redacted as the shareable tier is; spans the recording
never saw end are sent with ``agent_trace.unfinished``. Sending the same file twice sends the
same ids again (no state is kept anywhere): a backend that keys spans by id, as Tempo's and
Phoenix's storage do, keeps one copy.

The spans are rebuilt as the SDK's ``ReadableSpan`` and sent by the OTLP exporters
(:mod:`.send`) or written with their encoder (:mod:`.files`): the SDK is loaded only when a
session is exported, never by importing this package.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from otel_agent_trace import session_format as fmt

from .send import PROTOCOLS, ExportFailed, env_endpoint, env_protocol
from .spans import UNFINISHED_ATTRIBUTE, ExportSpan, SessionSpans, read_session_spans

__all__ = [
    "PROTOCOLS",
    "UNFINISHED_ATTRIBUTE",
    "ExportFailed",
    "ExportResult",
    "ExportSpan",
    "NothingToExport",
    "SessionSpans",
    "env_endpoint",
    "env_protocol",
    "export_session",
    "read_session",
    "read_session_spans",
    "write_file",
]


class NothingToExport(fmt.SessionFormatError):
    """A session with no span: an export would be empty (``issues``: what reading it noted)."""

    issues: list[fmt.ReadIssue]


@dataclass
class ExportResult:
    """What one export did: the session read and the spans sent or written; of those sent, how
    many the receiver said it rejected (OTLP's ``partial_success``), and what it said."""

    session: SessionSpans
    spans: int
    rejected: int = 0
    messages: list[str] = field(default_factory=list[str])

    @property
    def unfinished(self) -> int:
        return self.session.unfinished


def read_session(path: str | os.PathLike[str]) -> SessionSpans:
    """A session's spans, streamed, whatever its format (ours, DevDuck's ZIP, DM's JSONL)."""
    from otel_agent_trace.offline import loader
    from otel_agent_trace.offline.formats import native

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such session file")
    if loader.session_format_of(path) is native:
        return read_session_spans(path)
    from .foreign import read_foreign_spans

    return read_foreign_spans(path, loader.load_session(path))


def _nothing(session: SessionSpans) -> NothingToExport:
    kind = "" if session.format == "otel-agent-trace" else f" ({session.format})"
    error = NothingToExport(session.path, None, f"no spans in this session{kind}: nothing to export")
    error.issues = session.issues
    return error


def export_session(
    path: str | os.PathLike[str],
    endpoint: str,
    *,
    protocol: str = "http/protobuf",
    headers: Mapping[str, str] | None = None,
    service_name: str | None = None,
    batch_size: int = 512,
    timeout: float | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> ExportResult:
    """Send one session to an OTLP endpoint with the SDK's OTLP exporter (``timeout``, headers,
    compression, certificates: the arguments, else ``OTEL_EXPORTER_OTLP_*``).

    Raises :class:`ExportFailed` at once when the endpoint takes no connection, or when the
    exporter gives a batch up (``exc.sent`` spans were sent before); :class:`NothingToExport`
    for a session without spans (nothing is sent). A receiver that accepts a batch but rejects
    some of its spans (``partial_success``) does not stop the export: the result counts them.
    """
    from .otlp import readable_batches
    from .send import Sender

    session = read_session(path)
    sender = Sender(endpoint, protocol, headers, timeout=timeout, note=note)
    try:
        if progress:
            progress(0, None)
        for batch in readable_batches(session, service_name=service_name, max_spans=batch_size):
            sender.send(batch)
            if progress:
                progress(sender.sent, None)
    finally:
        sender.close()
    if not sender.sent:
        raise _nothing(session)
    return ExportResult(session, sender.sent, sender.rejected.spans, sender.rejected.messages)


def write_file(
    path: str | os.PathLike[str], out: IO[str], fmt_name: str, *, service_name: str | None = None
) -> ExportResult:
    """Write one session as ``otlp-json`` (one request per line) or ``jaeger-json``; raises
    :class:`NothingToExport` for a session without spans (``out`` then holds nothing)."""
    from .files import write_jaeger_json, write_otlp_json

    session = read_session(path)
    if fmt_name == "otlp-json":
        from .otlp import build_requests

        count = write_otlp_json(build_requests(session, service_name=service_name), out)
    elif fmt_name == "jaeger-json":
        count = write_jaeger_json(session, out, service_name)
    else:
        raise ValueError(f"unknown format {fmt_name!r} (otlp-json or jaeger-json)")
    if not count:
        raise _nothing(session)
    return ExportResult(session, count)
