"""The resource of an exported session: what a backend shows as its process."""

from __future__ import annotations

from typing import Any

from otel_agent_trace._version import __version__

from .spans import SessionSpans

DEFAULT_SERVICE_NAME = "otel-agent-trace"


def resource_attributes(session: SessionSpans, service_name: str | None = None) -> dict[str, Any]:
    """What the backend shows as the process: service name, session id, host, pid."""
    meta = session.metadata
    attrs: dict[str, Any] = {
        "service.name": service_name or DEFAULT_SERVICE_NAME,
        "session.id": session.session_id,
        "agent_trace.session.id": session.session_id,
        "agent_trace.tier": session.tier,
    }
    if session.format != "otel-agent-trace":
        attrs["agent_trace.source.format"] = session.format
    if isinstance(meta.get("hostname"), str) and meta["hostname"]:
        attrs["host.name"] = meta["hostname"]
    if isinstance(meta.get("pid"), int) and not isinstance(meta.get("pid"), bool):
        attrs["process.pid"] = meta["pid"]
    if isinstance(meta.get("argv"), list):
        attrs["process.command_args"] = [str(a) for a in meta["argv"]]
    attrs["telemetry.sdk.name"] = "otel-agent-trace"
    attrs["telemetry.sdk.version"] = __version__
    return attrs
