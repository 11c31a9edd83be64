"""Offline: everything that reads session files. Imports no capture code and needs no backend."""

from .loader import (
    EntryLookupError,
    Event,
    LoadedSession,
    SessionReadWarning,
    SpanRecord,
    iter_entries,
    iter_events,
    load_session,
)

__all__ = [
    "EntryLookupError",
    "Event",
    "LoadedSession",
    "SessionReadWarning",
    "SpanRecord",
    "iter_entries",
    "iter_events",
    "load_session",
]
