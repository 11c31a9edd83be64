"""otel-agent-trace: record, inspect and replay what AI agents do, on OpenTelemetry.

Zero code: ``opentelemetry-instrument python agent.py``. For custom agents::

    import otel_agent_trace as oat

    with oat.session("fix-bug"):
        with oat.agent("coder"):
            ...
        oat.snapshot("after the fix", messages=messages)

    session = oat.load_session("agent-sessions/<id>.zip")
"""

from otel_agent_trace import redaction  # oat.redaction.add_pattern(...), .allow(...), .redact(...)
from otel_agent_trace._version import __version__
from otel_agent_trace.api import Session, agent, configure, record_message, session, snapshot, tool
from otel_agent_trace.offline import LoadedSession, load_session

__all__ = [
    "LoadedSession",
    "Session",
    "__version__",
    "agent",
    "configure",
    "load_session",
    "record_message",
    "redaction",
    "session",
    "snapshot",
    "tool",
]
