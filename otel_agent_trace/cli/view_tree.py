"""``view``: the entries, in file order, as lines: :class:`TreePrinter` streams the indented tree
(a span's line waits for its end while few lines are pending, else is printed open and closed by an
``└ end`` line), :class:`JsonLines` the entries as JSON Lines (``--json``); :class:`Filter` decides
which are shown. Memory stays bounded whatever the file's size."""

from __future__ import annotations

import argparse
from collections import OrderedDict, deque
from typing import IO, Any

from otel_agent_trace import semconv as sc
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import terminal as term

from .view_text import VALUE_CHARS, describe, error_status, span_text

# Lines held back while the span at their head has not ended; past it, the span is printed open.
LOOKAHEAD = 500
# Ended spans whose level is kept for a child process's file that joins one of them later.
SPANS_REMEMBERED = 100_000
# Levels drawn as indentation; a deeper entry is drawn at this indentation with its level as a
# number (``[1234]``), so the output grows with the entries, not with the square of the depth.
DRAWN_DEPTH = 32


# --- which lines are shown --------------------------------------------------------------------


class Filter:
    """The options that hide lines: ``--layer``, ``--type``, ``--depth``, ``--errors``."""

    def __init__(self, args: argparse.Namespace):
        self.layer = args.layer
        self.types = set(args.types or ())
        self.depth = args.depth
        self.errors = args.errors

    def keeps(self, entry: dict[str, Any], level: int, *, error: bool = False) -> bool:
        if self.depth is not None and level > self.depth:
            return False
        if self.layer and entry.get("layer") != self.layer:
            return False
        kind = entry.get("type")
        if self.errors and not (error or (kind == fmt.SPAN_EVENT and entry.get("name") == "exception")):
            return False
        if self.types:
            attrs = entry.get("attributes")
            names = {
                kind,
                "span" if kind in (fmt.SPAN_START, fmt.SPAN_END) else None,
                "session" if kind in (fmt.SESSION_START, fmt.SESSION_JOIN, fmt.SESSION_END) else None,
                entry.get("name") if kind == fmt.SPAN_EVENT else None,
                attrs.get(sc.GEN_AI_OPERATION_NAME) if isinstance(attrs, dict) else None,
            }
            if not self.types & names:
                return False
        return True


# --- the tree, streamed -----------------------------------------------------------------------


# Entries that belong to a span and name it (``span_id``) beside their parent entry.
_OF_A_SPAN = frozenset({fmt.MESSAGE, fmt.SNAPSHOT})
WAITING = 10_000  # entries held back for a span not seen yet, at most
NAMES_KEPT = 10_000  # names of spans printed open, kept for their closing line at most


def _text_id(entry: dict[str, Any]) -> str:
    eid = entry.get("id")
    return eid if isinstance(eid, str) else ""


class _Pending:
    """A span whose line waits for its end entry."""

    __slots__ = ("end", "level", "start", "unfinished")

    def __init__(self, start: dict[str, Any], level: int):
        self.start = start
        self.level = level
        self.end: dict[str, Any] | None = None
        self.unfinished = False


class TreePrinter:
    """Turns entries, in file order, into indented lines; call :meth:`add` then :meth:`flush`."""

    def __init__(self, out: IO[str], keep: Filter, *, full: bool, columns: int | None):
        self.out = out
        self.keep = keep
        self.full = full
        self.columns = columns
        self.levels: dict[str, int] = {}  # entry id -> level, for entries that can have children
        # span id -> level of ended spans, to hang a child process under its span (open spans are
        # in self.open); the oldest are forgotten past SPANS_REMEMBERED, so memory stays bounded
        self.span_levels: OrderedDict[str, int] = OrderedDict()
        self.span_names: dict[str, str] = {}
        # span id -> a started span: its _Pending while its line waits in the queue; once printed
        # open, only its entry id (its level is in self.levels; its name, for the closing line,
        # in self.open_names while there are few): a crashed run may leave a million open
        self.open: dict[str, _Pending | str] = {}
        self.open_names: dict[str, str] = {}
        self.open_hidden: set[str] = set()  # entry ids of spans printed open that the filter hides
        self.queue: deque[_Pending | tuple[str, int, dict[str, Any]]] = deque()
        self.count = 0
        # span id -> entries that name a span not seen yet (a model call's messages and snapshot,
        # written under its parent while its own start was still queued): shown under that span
        # when its start or end comes; at most WAITING in all, past that shown where they are.
        self.waiting: dict[str, list[dict[str, Any]]] = {}
        self.waiting_count = 0

    def _level(self, entry: dict[str, Any]) -> int:
        parent = entry.get("parent_id")
        if not isinstance(parent, str) or not parent:
            return 0
        return self.levels.get(parent, 0) + 1

    def _remember(self, span_id: str, level: int) -> None:
        self.span_levels[span_id] = level
        if len(self.span_levels) > SPANS_REMEMBERED:
            self.span_levels.popitem(last=False)

    def add(self, entry: dict[str, Any]) -> None:
        self.count += 1
        kind = entry.get("type")
        eid = entry.get("id")
        eid = eid if isinstance(eid, str) else ""
        span_id = entry.get("span_id")
        span_id = span_id if isinstance(span_id, str) else ""
        if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
            level = 0
            meta = entry.get("metadata")
            parent_span = meta.get("parent_span_id") if isinstance(meta, dict) else None
            if kind == fmt.SESSION_JOIN and isinstance(parent_span, str):
                parent = self._open_level(parent_span)
                level = (parent if parent is not None else self.span_levels.get(parent_span, -1)) + 1
            if eid:
                self.levels[eid] = level
            self.queue.append((eid, level, entry))
        elif kind == fmt.SPAN_START and span_id:
            level = self._level(entry)
            if eid:
                self.levels[eid] = level
            pending = self.open[span_id] = _Pending(entry, level)
            self.queue.append(pending)
            self._release(span_id, level + 1)
        elif kind == fmt.SPAN_END and span_id in self.open:
            pending = self.open.pop(span_id)
            if isinstance(pending, _Pending):
                self._remember(span_id, pending.level)
                self.levels.pop(_text_id(pending.start), None)
                pending.end = entry
            else:  # printed open: close it with a line of its own
                level = self.levels.pop(pending, 0)
                self._remember(span_id, level)
                self.open_names.pop(pending, None)
                self.open_hidden.discard(pending)
                self.queue.append(("", level, {"$closing": pending, **entry}))
        elif kind == fmt.SPAN_END:  # a span with no start entry: its end says it all
            level = self._level(entry)
            if span_id:
                self._remember(span_id, level)
            pending = _Pending(entry, level)
            pending.end = entry
            self.queue.append(pending)
            self._release(span_id, level + 1)
        elif kind in _OF_A_SPAN and span_id and span_id not in self.open and span_id not in self.span_levels:
            self._wait(span_id, entry)
        else:
            self.queue.append((eid, self._level(entry), entry))
        self.flush(LOOKAHEAD)

    def _open_level(self, span_id: str) -> int | None:
        """The level of a span still open, if it is."""
        pending = self.open.get(span_id)
        if pending is None:
            return None
        return pending.level if isinstance(pending, _Pending) else self.levels.get(pending, 0)

    def _wait(self, span_id: str, entry: dict[str, Any]) -> None:
        self.waiting.setdefault(span_id, []).append(entry)
        self.waiting_count += 1
        if self.waiting_count > WAITING:  # bounded: the oldest group is shown where it stands
            oldest = next(iter(self.waiting))
            for waited in self.waiting.pop(oldest):
                self.queue.append((_text_id(waited), self._level(waited), waited))
            self.waiting_count = sum(map(len, self.waiting.values()))

    def _release(self, span_id: str, level: int) -> None:
        """The entries that waited for span ``span_id``: under it now."""
        waited = self.waiting.pop(span_id, None) if span_id else None
        if waited:
            self.waiting_count -= len(waited)
            for entry in waited:
                eid = _text_id(entry)
                if eid and entry.get("type") != fmt.MESSAGE:
                    self.levels[eid] = level
                self.queue.append((eid, level, entry))

    def flush(self, keep_pending: int = 0) -> None:
        """Print the lines that are ready; past ``keep_pending`` queued lines, print the first open
        span as it is (0: everything now, open spans as open)."""
        queue = self.queue
        while queue:
            head = queue[0]
            if isinstance(head, _Pending):
                if head.end is None and len(queue) <= keep_pending:
                    return
                queue.popleft()
                self._print_span(head)
            else:
                queue.popleft()
                eid, level, entry = head
                closing = entry.get("$closing")
                if closing is not None:  # the end of a span printed open: its start entry's id
                    if self.keep.keeps(entry, level, error=bool(error_status(entry, False))):
                        self._write(closing, level, span_text(entry, entry, self.full, True))
                elif self.keep.keeps(entry, level):
                    self._write(eid, level, describe(entry, self.full))

    def _print_span(self, pending: _Pending) -> None:
        start = pending.start
        shown = pending.end if pending.end is not None else start
        eid = str(start.get("id", ""))
        if self.keep.keeps(shown, pending.level, error=bool(error_status(shown, False))):
            text = span_text(start, pending.end, self.full, unfinished=pending.unfinished)
            self._write(eid, pending.level, text)
        if pending.end is None and not pending.unfinished:  # printed open: keep only what its
            # closing lines need (a span end may still come, or the file ends first)
            sid = start.get("span_id")
            if isinstance(sid, str) and self.open.get(sid) is pending:
                self.open[sid] = eid
                self.levels[eid] = pending.level
                if not self.keep.keeps(start, pending.level):
                    self.open_hidden.add(eid)
                elif len(self.open_names) < NAMES_KEPT:
                    name = term.fit(start.get("name", "?"), None if self.full else VALUE_CHARS)
                    self.open_names[eid] = name

    def finish(self) -> None:
        """End of the file: spans still open are unfinished."""
        for group in self.waiting.values():  # their span never came: shown where they stand
            for entry in group:
                self.queue.append((_text_id(entry), self._level(entry), entry))
        self.waiting.clear()
        self.waiting_count = 0
        earlier = [eid for eid in self.open.values() if isinstance(eid, str)]
        for pending in self.open.values():
            if isinstance(pending, _Pending):
                pending.unfinished = True
        self.flush(0)
        for eid in earlier:
            if eid not in self.open_hidden:
                name = self.open_names.get(eid, "…")  # not kept: more than NAMES_KEPT were open
                self._write(eid, self.levels.get(eid, 0), f"└ {name} UNFINISHED")
        self.open.clear()

    def _write(self, eid: str, level: int, text: str) -> None:
        indent = "  " * level if level <= DRAWN_DEPTH else f"{'  ' * DRAWN_DEPTH}[{level}] "
        line = f"{term.clean(eid)}  {indent}{text}"
        if self.columns is not None and len(line) > self.columns:
            line = line[: max(self.columns - 1, 0)] + "…"
        self.out.write(line + "\n")


class JsonLines:
    """``--json``: the entries that pass the filters, one object a line (levels for ``--depth``)."""

    def __init__(self, out: IO[str], keep: Filter):
        self.out = out
        self.keep = keep
        self.levels: dict[str, int] = {}  # open spans' and sessions' start entries
        self.count = 0

    def add(self, entry: dict[str, Any]) -> None:
        self.count += 1
        levels = self.levels
        parent = entry.get("parent_id")
        level = levels.get(parent, 0) + 1 if isinstance(parent, str) and parent else 0
        kind = entry.get("type")
        if kind == fmt.SPAN_END and isinstance(parent, str) and parent in levels:
            level = levels.pop(parent)  # under its own start entry: the span's level
        elif kind in (fmt.SPAN_START, fmt.SESSION_START, fmt.SESSION_JOIN) and isinstance(
            entry.get("id"), str
        ):
            levels[entry["id"]] = level
        if self.keep.keeps(entry, level, error=bool(error_status(entry, False))):
            self.out.write(term.json_line(entry))

    def flush(self, keep_pending: int = 0) -> None:
        self.out.flush()

    def finish(self) -> None:
        self.out.flush()
