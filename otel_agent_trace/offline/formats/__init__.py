"""The session formats the loader reads, each mapped into our entries (``id``, ``parent_id``,
``type``, ``layer``, ``ts`` in ns, then the format's own fields): ours (:mod:`.native`), DevDuck's
session ZIP (:mod:`.devduck`) and DM-Code-Agent's JSONL (:mod:`.dm`).

A format is told from the first entry of a file. Each is a module with the names of
:class:`~.protocol.Format`: how its files are told and read (``matches``, ``normalizer``,
``child_files``), what a loaded session of it says (``session_id``, ``tier``, ``metadata``,
``duration``, ``evicted``, ``spans``, ``snapshots``, ``conversation``, with ``END_TYPES`` and
``SNAPSHOT_TYPES``) and its entries as ours for the analysis (``as_ours``, streamed). The loader
asks the format it found, never which one it is; :func:`register` adds another.
"""

from __future__ import annotations

from typing import Any

from . import devduck, dm, native
from ._checks import BadEntry
from .protocol import Format, Session
from .records import Event, Heading, SpanRecord

# Told in this order; ours last, as what is read when nothing else matches.
FORMATS: list[Format] = [devduck, dm, native]


def detect(raw: dict[str, Any]) -> Format:
    """The format of a file, from its first entry (ours when nothing else matches)."""
    for module in FORMATS:
        if module.matches(raw):
            return module
    return native


def by_name(name: str) -> Format:
    return next(m for m in FORMATS if name == m.NAME)


def register(format: Format) -> None:
    """Read files ``format`` matches as that format (told before the others)."""
    if format not in FORMATS:
        FORMATS.insert(0, format)


def unregister(format: Format) -> None:
    if format in FORMATS and format is not native:
        FORMATS.remove(format)


__all__ = [
    "FORMATS",
    "BadEntry",
    "Event",
    "Format",
    "Heading",
    "Session",
    "SpanRecord",
    "by_name",
    "detect",
    "devduck",
    "dm",
    "native",
    "register",
    "unregister",
]
