"""``opentelemetry.exporter.agent_session``: the entry-point name of the agent session exporter
(``OTEL_TRACES_EXPORTER=agent_session``). The engine lives in :mod:`otel_agent_trace.recording`;
this namespace only hands its names on (loaded when first used, as there)."""

from otel_agent_trace import recording as _recording

__all__ = list(_recording.__all__)


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(_recording, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
