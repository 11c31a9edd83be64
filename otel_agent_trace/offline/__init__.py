"""Offline: everything that reads session files. Imports no capture code and needs no backend."""

from .loader import Event, LoadedSession, SpanRecord, iter_entries, load_session

__all__ = ["Event", "LoadedSession", "SpanRecord", "iter_entries", "load_session"]
