"""The public API for agents that are not auto-instrumented (re-exported by the package)."""

from .session import Session, configure, record_message, session, snapshot
from .spans import SpanScope, agent, tool

__all__ = ["Session", "SpanScope", "agent", "configure", "record_message", "session", "snapshot", "tool"]
