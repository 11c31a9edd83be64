"""A session file read in one streaming pass into an :class:`~.accumulator.Accumulator`:
:func:`summarize` feeds it the entries of the file and of its child processes' files
(:func:`otel_agent_trace.session_format.iter_entries`; a DevDuck or DM-Code-Agent session through
the loader and :mod:`.foreign`).

The pass itself: :mod:`.accumulator` (feeding, one handler per kind of span), :mod:`.outcomes`
(failures, recovery, verification, loops, steps), :mod:`.facts` (what it knows, and its caps),
:mod:`.records` (the small records it keeps), :mod:`.values` (values read defensively).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt

from . import foreign
from .accumulator import Accumulator
from .dm_verdicts import DMVerdicts
from .facts import OPEN_DESCRIBED, UNFINISHED_KEPT

__all__ = ["OPEN_DESCRIBED", "UNFINISHED_KEPT", "Accumulator", "session_paths", "summarize"]


def session_paths(path: Path, issues: list[fmt.ReadIssue] | None = None) -> list[Path]:
    """A session file followed by its child processes' files (for a JSONL file; a ZIP has them);
    a child name that is not a regular file is left out, noted in ``issues``."""
    if path.suffix != fmt.JSONL_SUFFIX or not path.is_file():
        return [path]
    stem = path.name[: -len(fmt.JSONL_SUFFIX)]
    tier = "trace"
    if stem.endswith(fmt.CHECKPOINT_SUFFIX):
        stem, tier = stem[: -len(fmt.CHECKPOINT_SUFFIX)], "checkpoint"
    if ".p" in stem.rsplit("-", 1)[-1]:  # a child file itself
        return [path]
    return fmt.child_files(path.parent, stem, path, tier, issues)


def summarize(
    path: str | os.PathLike[str],
    *,
    actions: bool = False,
    steps: int = 0,
    strict: bool = False,
    children: list[Path] | None = None,
) -> tuple[Accumulator, list[fmt.ReadIssue]]:
    """Read a session (and its child files) in one streaming pass. ``children``: the child
    files when the caller knows them already (else they are looked up beside ``path``)."""
    acc = Accumulator(actions=actions, steps=steps)
    issues: list[fmt.ReadIssue] = []
    if children is None:
        parts = session_paths(Path(path), issues)
    else:
        parts = [Path(path), *fmt.regular_files(children, issues)]
    for number, part in enumerate(parts):
        entries: Iterator[dict[str, Any]] = fmt.iter_entries(part, None if strict else issues)
        if number == 0:
            entries = _in_our_shape(acc, part, entries, issues, strict)
        acc.consume(entries)
    if not acc.entries:
        raise fmt.SessionFormatError(path, None, "no session entries (an empty file)")
    return acc, issues


def _in_our_shape(
    acc: Accumulator,
    path: Path,
    entries: Iterator[dict[str, Any]],
    issues: list[fmt.ReadIssue],
    strict: bool,
) -> Iterator[dict[str, Any]]:
    """A session's entries in our shape: ours as they are read; a DevDuck or DM-Code-Agent
    session (told from its first entry) read by the loader and mapped by :mod:`.foreign`."""
    from otel_agent_trace.offline import formats  # the loader only for a foreign file

    seen = len(issues)
    first = next(entries, None)
    if first is None:
        return entries
    module = formats.detect(first)
    if module is formats.native:
        return itertools.chain((first,), entries)
    if isinstance(entries, Generator):  # the reader's: its file closed now
        entries.close()
    del issues[seen:]  # read again below
    from otel_agent_trace.offline.loader import iter_entries

    acc.format = module.NAME
    mapped = iter_entries(path, None if strict else issues, strict=strict, children=False)
    if module is formats.dm:  # DM's own verdicts, read on the way (the same pass)
        acc.dm = DMVerdicts()
        return foreign.as_ours(module, acc.dm.read(mapped))
    return foreign.as_ours(module, mapped)
