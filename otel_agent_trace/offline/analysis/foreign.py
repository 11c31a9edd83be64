"""DevDuck and DM-Code-Agent sessions as the entries the analysis reads: each format turns its
events, as the loader maps them, into our span, message and session entries (its ``as_ours``, in
:mod:`otel_agent_trace.offline.formats`), so ``analyze``, ``diff`` and ``report`` give the same
checklist for them. What is only the analysis's is decided here: the stage of a failure that is no
span (a response that did not parse is :data:`~.classify.PARSE`; a plan that failed is told by
its text, else :data:`~.classify.MODEL`).

Entries are made one by one as the file is read (nothing is kept but the running tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..formats import Format, ours
from . import classify as cls

FAILURE = ours.FAILURE  # a failure that is no span: its stage, key and reason
REPLAN = ours.REPLAN


def as_ours(format: Format, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A session's entries (as the loader maps them) as ours, failures given their stage."""
    for entry in format.as_ours(entries):
        if entry["type"] is FAILURE:
            entry["stage"] = _stage(entry)
        yield entry


def _stage(entry: dict[str, Any]) -> str:
    if entry["cause"] == ours.PARSE_FAILED:
        return cls.PARSE
    return cls.failure_stage(entry["reason"], cls.MODEL)
