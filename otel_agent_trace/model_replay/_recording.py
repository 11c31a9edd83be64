"""What a checkpoint-tier session holds for model replay: its HTTP exchanges, in the order they
were sent, and its tool calls' results. Read in one streaming pass (only these are kept)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

CONTENT_KEY = "http_exchanges"  # as the capture side writes it (instrumentation/system/http/_exchange)
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"


class RecordingError(ValueError):
    """The session cannot answer a replay (trace tier, no exchanges); the message says why."""


def _bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and isinstance(value.get("base64"), str):
        import base64

        return base64.b64decode(value["base64"])
    return b""


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of a URL, the default port made explicit."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or ""), port


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface (``localhost``, 127.0.0.0/8,
    ``::1``): a model server there is local, and its port is often chosen as it starts."""
    if host.lower() in ("localhost", "localhost."):
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def target(url: str) -> str:
    """Path and query of a URL."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass
class Exchange:
    """One recorded HTTP exchange."""

    index: int  # 1-based, in the order sent
    entry_id: str  # the span.end entry that holds it
    span_name: str
    method: str
    url: str
    request_headers: list[list[str]]
    request_body: bytes | None
    status: int
    response_headers: list[list[str]]
    chunks: list[bytes]
    http_version: str | None
    reason: str | None
    complete: bool
    truncated: bool

    @property
    def origin(self) -> tuple[str, str, int | None]:
        return origin(self.url)


@dataclass
class ToolCall:
    """One recorded tool call's result."""

    name: str
    call_id: str | None
    result: Any
    entry_id: str
    error: bool
    used: bool = False


@dataclass
class Recording:
    path: str
    session_id: str
    tier: str
    exchanges: list[Exchange] = field(default_factory=list)
    tools: list[ToolCall] = field(default_factory=list)

    @property
    def origins(self) -> set[tuple[str, str, int | None]]:
        return {e.origin for e in self.exchanges}


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """The exchanges and tool results of a session file (``.jsonl`` or ZIP, checkpoint tier).

    Raises :class:`RecordingError` for a trace-tier session (no content) or one with no exchange.
    """
    from otel_agent_trace.offline.loader import iter_entries

    found: list[tuple[int, int, Exchange]] = []
    tools: list[ToolCall] = []
    started: dict[str, dict[str, Any]] = {}  # tool spans whose start is read and end not yet
    session_id, tier = "", ""
    for entry in iter_entries(path, children=False):
        kind = entry.get("type")
        if kind in ("session.start", "session.join") and not session_id:
            session_id = str(entry.get("session_id") or "")
            tier = str(entry.get("tier") or "trace")
            if tier != "checkpoint":
                raise RecordingError(
                    f"{path}: session {session_id} was recorded in the {tier} tier, which keeps no "
                    "message content (lengths and hashes only): model replay needs the checkpoint "
                    "tier. Record the agent again with AGENT_TRACE_TIER=checkpoint (or both) and "
                    "replay the .checkpoint.jsonl file or its ZIP."
                )
            continue
        if kind == "span.start":  # a span.end repeats no attribute its start already wrote
            attrs = entry.get("attributes")
            if isinstance(attrs, dict) and attrs.get("gen_ai.operation.name") == "execute_tool":
                started[str(entry.get("span_id"))] = attrs
            continue
        if kind != "span.end":
            continue
        content = entry.get("content")
        attrs = entry.get("attributes") or {}
        if str(entry.get("span_id")) in started:
            attrs = {**started.pop(str(entry.get("span_id"))), **(attrs if isinstance(attrs, dict) else {})}
        if isinstance(content, dict) and isinstance(content.get(CONTENT_KEY), list):
            for record in content[CONTENT_KEY]:
                exchange = _exchange(record, entry)
                if exchange is not None:
                    found.append((int(record.get("seq") or 0), int(record.get("ts") or 0), exchange))
        if (
            isinstance(attrs, dict)
            and attrs.get(TOOL_NAME)
            and attrs.get("gen_ai.operation.name") == ("execute_tool")
        ):
            result = content.get("tool_result") if isinstance(content, dict) else None
            tools.append(
                ToolCall(
                    name=str(attrs[TOOL_NAME]),
                    call_id=attrs.get(TOOL_CALL_ID),
                    result=result,
                    entry_id=str(entry.get("id") or ""),
                    error=(entry.get("status") or {}).get("code") == "ERROR"
                    if isinstance(entry.get("status"), dict)
                    else entry.get("status") == "ERROR",
                )
            )
    if not session_id:
        raise RecordingError(f"{path}: not a session file of ours (no session.start entry)")
    found.sort(key=lambda item: (item[0], item[1]))
    exchanges = [e for _, _, e in found]
    for number, exchange in enumerate(exchanges, 1):
        exchange.index = number
    if not exchanges:
        raise RecordingError(
            f"{path}: session {session_id} holds no recorded HTTP exchange, so there is nothing to "
            "answer model calls with. Exchanges are kept in the checkpoint tier by this version's "
            "HTTP instrumentation (httpx/httpx2) under opentelemetry-instrument: record the agent again "
            "with AGENT_TRACE_TIER=checkpoint (or both)."
        )
    return Recording(str(path), session_id, tier, exchanges, tools)


def _exchange(record: Any, entry: dict[str, Any]) -> Exchange | None:
    if not isinstance(record, dict):
        return None
    request, response = record.get("request"), record.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    body = request.get("body")
    return Exchange(
        index=0,
        entry_id=str(entry.get("id") or ""),
        span_name=str(entry.get("name") or ""),
        method=str(request.get("method") or "GET"),
        url=str(request.get("url") or ""),
        request_headers=list(request.get("headers") or []),
        request_body=None if body is None else _bytes(body),
        status=int(response.get("status") or 0),
        response_headers=list(response.get("headers") or []),
        chunks=[_bytes(c) for c in response.get("chunks") or []],
        http_version=response.get("http_version"),
        reason=response.get("reason"),
        complete=bool(response.get("complete")),
        truncated=bool(response.get("truncated")),
    )
