"""otel-agent-trace: record, inspect and replay what AI agents do, on OpenTelemetry.

Zero code: ``opentelemetry-instrument python agent.py``. For custom agents::

    import otel_agent_trace as oat

    with oat.session("fix-bug"):
        with oat.agent("coder"):
            ...
        oat.snapshot("after the fix", messages=messages)

    session = oat.load_session("agent-sessions/<id>.zip")

Names are loaded when first used: ``import otel_agent_trace`` (and every child Python process of
an agent run under ``opentelemetry-instrument``) pays only for what it touches, and the offline
half never loads capture code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_agent_trace._lazy import lazy_names
from otel_agent_trace._version import __version__

if TYPE_CHECKING:
    from otel_agent_trace import model_replay, redaction
    from otel_agent_trace.api import Session, agent, configure, record_message, session, snapshot, tool
    from otel_agent_trace.offline import LoadedSession, SessionReadWarning, load_session
    from otel_agent_trace.recording import add_session_processor
    from otel_agent_trace.session_format import SessionFormatError

# public name -> the module holding it ("" for the module of that name itself)
_LAZY: dict[str, str] = {
    "redaction": "",  # oat.redaction.add_pattern(...), .allow(...)
    "model_replay": "",  # with oat.model_replay(session): model calls answered from a recording
    "Session": "api",
    "agent": "api",
    "configure": "api",
    "record_message": "api",
    "session": "api",
    "snapshot": "api",
    "tool": "api",
    "LoadedSession": "offline",
    "load_session": "offline",
    "SessionReadWarning": "offline",
    "SessionFormatError": "session_format",  # what load_session raises for bad input
    "add_session_processor": "recording",
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

__all__ = [
    "LoadedSession",
    "Session",
    "SessionFormatError",
    "SessionReadWarning",
    "__version__",
    "add_session_processor",
    "agent",
    "configure",
    "load_session",
    "model_replay",
    "record_message",
    "redaction",
    "session",
    "snapshot",
    "tool",
]
