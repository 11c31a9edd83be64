"""The session formats the loader reads, each mapped into our entries (``id``, ``parent_id``,
``type``, ``layer``, ``ts`` in ns, then the format's own fields): ours (:mod:`.native`), DevDuck's
session ZIP (:mod:`.devduck`) and DM-Code-Agent's JSONL (:mod:`.dm`).

A format is told from the first entry of a file. Every module offers ``NAME``, ``matches(raw)``,
``Normalizer`` (one per file: ``normalize(raw) -> entry``, raising :class:`BadEntry`),
``END_TYPES`` (entries that say the recording was stopped) and ``SNAPSHOT_TYPES``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from . import devduck, dm, native
from ._checks import BadEntry

FORMATS: tuple[ModuleType, ...] = (devduck, dm, native)


def detect(raw: dict[str, Any]) -> ModuleType:
    """The format of a file, from its first entry (ours when nothing else matches)."""
    for module in FORMATS:
        if module.matches(raw):
            return module
    return native


def by_name(name: str) -> ModuleType:
    return next(m for m in FORMATS if name == m.NAME)


__all__ = ["FORMATS", "BadEntry", "by_name", "detect", "devduck", "dm", "native"]
