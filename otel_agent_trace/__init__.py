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

import importlib
from typing import TYPE_CHECKING, Any

from otel_agent_trace._version import __version__

if TYPE_CHECKING:
    from otel_agent_trace import redaction
    from otel_agent_trace.api import Session, agent, configure, record_message, session, snapshot, tool
    from otel_agent_trace.offline import LoadedSession, load_session
    from otel_agent_trace.recording import add_session_processor

# public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "redaction": ("otel_agent_trace.redaction", None),  # oat.redaction.add_pattern(...), .allow(...)
    "Session": ("otel_agent_trace.api", "Session"),
    "agent": ("otel_agent_trace.api", "agent"),
    "configure": ("otel_agent_trace.api", "configure"),
    "record_message": ("otel_agent_trace.api", "record_message"),
    "session": ("otel_agent_trace.api", "session"),
    "snapshot": ("otel_agent_trace.api", "snapshot"),
    "tool": ("otel_agent_trace.api", "tool"),
    "LoadedSession": ("otel_agent_trace.offline", "LoadedSession"),
    "load_session": ("otel_agent_trace.offline", "load_session"),
    "add_session_processor": ("otel_agent_trace.recording", "add_session_processor"),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'otel_agent_trace' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "LoadedSession",
    "Session",
    "__version__",
    "add_session_processor",
    "agent",
    "configure",
    "load_session",
    "record_message",
    "redaction",
    "session",
    "snapshot",
    "tool",
]
