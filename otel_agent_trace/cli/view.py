"""``otel-agent-trace view FILE``: the session tree, one line per span, event, message, snapshot.

The file is streamed and printed as it is read: a span's line waits for the span's end (so it can
show duration, tokens, exit code, status) only while few lines are pending; a span with a large
subtree (the agent's run) is printed when it starts and gets a closing ``└ end`` line. The same
happens with ``--follow`` whenever the writer pauses.
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from otel_agent_trace import semconv as sc
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import terminal as term
from otel_agent_trace.offline.loader import iter_entries

# Lines held back while the span at their head has not ended; past it, the span is printed open.
LOOKAHEAD = 500
# Ended spans whose level is kept for a child process's file that joins one of them later.
SPANS_REMEMBERED = 100_000
# Characters of one value (arguments, results, URLs) before the whole line is cut to the width.
VALUE_CHARS = 80
# Levels drawn as indentation; a deeper entry is drawn at this indentation with its level as a
# number (``[1234]``), so the output grows with the entries, not with the square of the depth.
DRAWN_DEPTH = 32
MODEL_OPERATIONS = {sc.OP_CHAT, sc.OP_TEXT_COMPLETION, sc.OP_GENERATE_CONTENT, sc.OP_EMBEDDINGS}
FILE_MODE = "agent_trace.file.mode"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="print a session's tree",
        description="Print a session's tree: one line per span with what it did, its events, "
        "messages and snapshots. Exit codes: 0 ok, 1 a bad line in the file (other than a torn "
        "last line), 2 bad input (missing, empty or not a session file).",
    )
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument(
        "other",
        nargs="?",
        metavar="OTHER",
        help="with --html: a second session, the two compared on one page (as diff --html)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the entries as JSON Lines: one JSON object a line, streamed as the file is read (memory "
        "stays bounded whatever its size); with --html, one JSON document saying what was written",
    )
    p.add_argument("--layer", choices=fmt.LAYERS, help="only entries of this layer")
    p.add_argument(
        "--type",
        dest="types",
        action="append",
        metavar="TYPE",
        help="only these entries: an entry type (span, message, snapshot, span.event, session), an "
        "operation (chat, execute_tool, invoke_agent) or an event name (file.open); repeatable",
    )
    p.add_argument("--depth", type=int, metavar="N", help="only the first N levels of the tree (0: the root)")
    p.add_argument("--errors", action="store_true", help="only spans that failed, and exception events")
    p.add_argument("--full", action="store_true", help="print values whole (no cut to the width)")
    p.add_argument("--lenient", action="store_true", help="skip bad lines, count them, exit 0")
    p.add_argument("--follow", "-f", action="store_true", help="keep watching a live session (like tail -f)")
    p.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML timeline to OUT instead (a new file: never overwritten)",
    )
    p.set_defaults(func=run)


# --- what a line says -------------------------------------------------------------------------


def _preview(value: Any, full: bool) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = orjson.dumps(value, default=str).decode()
    return term.fit(value, None if full else VALUE_CHARS)


def _attr(attrs: dict[str, Any], key: str) -> Any:
    value = attrs.get(key)
    return value if value not in (None, "", []) else None


def span_facts(entry: dict[str, Any], full: bool = False) -> list[str]:
    """The key facts of a span for its kind: model, tool, process, HTTP (each a cleaned string)."""
    attrs = entry.get("attributes")
    attrs = attrs if isinstance(attrs, dict) else {}
    content = entry.get("content")
    content = content if isinstance(content, dict) else {}
    facts: list[str] = []
    op = attrs.get(sc.GEN_AI_OPERATION_NAME)
    if op in MODEL_OPERATIONS:
        model = _attr(attrs, sc.GEN_AI_RESPONSE_MODEL) or _attr(attrs, sc.GEN_AI_REQUEST_MODEL)
        if model is not None and str(model) not in str(entry.get("name")):
            facts.append(f"model={term.fit(model, VALUE_CHARS)}")
        tokens_in = attrs.get(sc.GEN_AI_USAGE_INPUT_TOKENS)
        tokens_out = attrs.get(sc.GEN_AI_USAGE_OUTPUT_TOKENS)
        if tokens_in is not None or tokens_out is not None:
            facts.append(
                f"tokens {term.clean(tokens_in if tokens_in is not None else '?')}"
                f"→{term.clean(tokens_out if tokens_out is not None else '?')}"
            )
        reasons = _attr(attrs, sc.GEN_AI_RESPONSE_FINISH_REASONS)
        if reasons is not None:
            joined = ",".join(map(str, reasons)) if isinstance(reasons, list) else reasons
            facts.append(f"finish={term.fit(joined, VALUE_CHARS)}")
        asked = _attr(attrs, sc.TOOL_CALL_NAMES)
        if asked is not None:
            joined = ",".join(map(str, asked)) if isinstance(asked, list) else asked
            facts.append(f"asks {term.fit(joined, None if full else VALUE_CHARS)}")
    elif op == sc.OP_EXECUTE_TOOL or sc.GEN_AI_TOOL_NAME in attrs:
        call_id = _attr(attrs, sc.GEN_AI_TOOL_CALL_ID)
        if call_id is not None:
            facts.append(f"id={term.fit(call_id, VALUE_CHARS)}")
        arguments = content.get("tool_arguments", attrs.get(sc.GEN_AI_TOOL_CALL_ARGUMENTS))
        if arguments is not None:
            facts.append(f"args={_preview(arguments, full)}")
        result = content.get("tool_result", attrs.get(sc.GEN_AI_TOOL_CALL_RESULT))
        if result is not None:
            facts.append(f"→ {_preview(result, full)}")
    elif sc.PROCESS_COMMAND_ARGS in attrs or sc.PROCESS_EXIT_CODE in attrs:
        argv = attrs.get(sc.PROCESS_COMMAND_ARGS)
        if isinstance(argv, list):
            facts.append(_preview(shlex.join(map(str, argv)), full))
        elif argv is not None:
            facts.append(_preview(argv, full))
        if sc.PROCESS_EXIT_CODE in attrs:
            facts.append(f"exit={term.clean(attrs[sc.PROCESS_EXIT_CODE])}")
    elif sc.HTTP_REQUEST_METHOD in attrs or sc.URL_FULL in attrs:
        method = attrs.get(sc.HTTP_REQUEST_METHOD)
        if method is not None and str(method) != str(entry.get("name")):
            facts.append(term.fit(method, 16))
        if sc.URL_FULL in attrs:
            facts.append(_preview(attrs[sc.URL_FULL], full))
        if sc.HTTP_RESPONSE_STATUS_CODE in attrs:
            facts.append(f"→ {term.clean(attrs[sc.HTTP_RESPONSE_STATUS_CODE])}")
    return facts


def _event_facts(entry: dict[str, Any], full: bool) -> list[str]:
    attrs = entry.get("attributes")
    attrs = attrs if isinstance(attrs, dict) else {}
    if sc.FILE_PATH in attrs:
        facts = [_preview(attrs[sc.FILE_PATH], full)]
        if FILE_MODE in attrs:
            facts.append(f"mode={term.fit(attrs[FILE_MODE], 8)}")
        return facts
    picked = [k for k in attrs if not k.startswith("session.")][:3]
    return [f"{term.fit(k, 40)}={_preview(attrs[k], full)}" for k in picked]


def _status(entry: dict[str, Any], full: bool) -> str:
    status = entry.get("status")
    status = status if isinstance(status, dict) else {}
    if status.get("code") != fmt.STATUS_ERROR:
        return ""
    description = status.get("description")
    return "ERROR" + (f": {_preview(description, full)}" if description else "")


def _span_text(
    start: dict[str, Any],
    end: dict[str, Any] | None,
    full: bool,
    closing: bool = False,
    unfinished: bool = False,
) -> str:
    """A span's line: from its end entry when it has ended, else from its start entry."""
    shown = end if end is not None else start
    parts = [("└ end " if closing else "") + term.fit(shown.get("name", "?"), None if full else VALUE_CHARS)]
    if not closing:
        parts.append(f"[{term.fit(shown.get('layer', '?'), 8)}]")
    if end is None:
        parts.append("UNFINISHED" if unfinished else "…")
    else:
        took = end.get("duration_ns")
        if isinstance(took, (int, float)) and not isinstance(took, bool):
            parts.append(term.duration(took / 1e9))
        parts.append(_status(end, full))
    parts += span_facts(shown, full)
    return " ".join(p for p in parts if p)


def _message_text(entry: dict[str, Any], full: bool) -> str:
    content = entry.get("content", entry.get("content_preview"))  # DevDuck keeps a preview
    if content is not None:
        text = _preview(content, full)
    else:
        text = f"<{term.clean(entry.get('content_chars', '?'))} chars>"
    calls = entry.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = [
            str(
                (c.get("function") or {}).get("name")
                if isinstance(c.get("function"), dict)
                else c.get("name")
            )
            for c in calls
            if isinstance(c, dict)
        ]
        text += f" calls {term.fit(','.join(names), VALUE_CHARS)}"
    if entry.get("tool_call_id"):
        text += f" (for {term.fit(entry['tool_call_id'], VALUE_CHARS)})"
    return f"✉ {term.fit(entry.get('role', '?'), None if full else 24)}: {text}"


_STANDARD_FIELDS = {
    "id",
    "parent_id",
    "type",
    "layer",
    "ts",
    "trace_id",
    "span_id",
    "name",
    "session_id",
    "run_id",
}


def _foreign_text(entry: dict[str, Any], full: bool) -> str:
    """An entry of a type we do not know (DevDuck's ``file.open``, ``tool.call``, DM's events, as
    the loader maps them): its type, name, layer and first few fields."""
    kind = entry.get("type") or "?"
    parts = [term.fit(kind, VALUE_CHARS)]
    if entry.get("name") is not None:
        parts.append(term.fit(entry["name"], None if full else VALUE_CHARS))
    if entry.get("layer"):
        parts.append(f"[{term.fit(entry['layer'], 8)}]")
    data = entry.get("data", entry.get("payload"))
    fields = data if isinstance(data, dict) else {k: v for k, v in entry.items() if k not in _STANDARD_FIELDS}
    for key in list(fields)[:3]:
        if fields[key] is not None:
            parts.append(f"{term.fit(key, 40)}={_preview(fields[key], full)}")
    return " ".join(parts)


def describe(entry: dict[str, Any], full: bool = False) -> str:
    """One line of text for an entry that is not a span (spans: :func:`_span_text`)."""
    kind = entry.get("type")
    if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
        meta = entry.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        session_id = term.fit(entry.get("session_id", "?"), VALUE_CHARS)
        text = f"{kind} {session_id}"
        if entry.get("tier") is not None:
            text += f" tier={term.fit(entry['tier'], 16)}"
        if meta.get("pid") is not None:
            text += f" pid={term.fit(meta['pid'], 16)}"
        if kind == fmt.SESSION_JOIN and meta.get("parent_span_id"):
            text += f" (child process, under span {term.fit(meta['parent_span_id'], 32)})"
        return text
    if kind == fmt.SESSION_END:
        took = entry.get("duration_ns")
        seconds = took / 1e9 if isinstance(took, (int, float)) and not isinstance(took, bool) else None
        text = f"session.end after {term.duration(seconds)}"
        if entry.get("unfinished_spans"):
            text += f" unfinished_spans={term.clean(entry['unfinished_spans'])}"
        return text
    if kind == fmt.SPAN_EVENT:
        return " ".join(["·", term.fit(entry.get("name", "?"), VALUE_CHARS), *_event_facts(entry, full)])
    if kind == fmt.MESSAGE:
        return _message_text(entry, full)
    if kind == fmt.SNAPSHOT:
        description = entry.get("description")
        text = f"snapshot #{term.fit(entry.get('snapshot_id', '?'), 12)}"
        if description:
            text += f" {_preview(description, full)}"
        if entry.get("messages_count") is not None:
            text += f" ({term.clean(entry['messages_count'])} messages)"
        return text
    return _foreign_text(entry, full)


# --- which lines are shown --------------------------------------------------------------------


class _Filter:
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

    def __init__(self, out: IO[str], keep: _Filter, *, full: bool, columns: int | None):
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
                    if self.keep.keeps(entry, level, error=bool(_status(entry, False))):
                        self._write(closing, level, _span_text(entry, entry, self.full, True))
                elif self.keep.keeps(entry, level):
                    self._write(eid, level, describe(entry, self.full))

    def _print_span(self, pending: _Pending) -> None:
        start = pending.start
        shown = pending.end if pending.end is not None else start
        eid = str(start.get("id", ""))
        if self.keep.keeps(shown, pending.level, error=bool(_status(shown, False))):
            text = _span_text(start, pending.end, self.full, unfinished=pending.unfinished)
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


# --- reading ----------------------------------------------------------------------------------


def _check_input(path: Path) -> None:
    """Refuse what is not a regular session file before opening it (a FIFO would hang, a device
    never ends, an empty file holds no session)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such session file") from None
    except OSError as exc:
        raise fmt.SessionFormatError(path, None, f"cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        if (path / fmt.ZIP_EVENTS).is_file():  # an unpacked session ZIP
            return
        raise fmt.SessionFormatError(path, None, "is a directory (list it with `otel-agent-trace list DIR`)")
    if not stat.S_ISREG(st.st_mode):
        raise fmt.SessionFormatError(path, None, "not a regular file (a FIFO, a device or a socket)")
    if st.st_size == 0:
        raise fmt.SessionFormatError(path, None, "empty file: no session entries")
    if not os.access(path, os.R_OK):
        raise fmt.SessionFormatError(path, None, "cannot read (permission denied)")


def _entries(path: Path, issues: list[fmt.ReadIssue]) -> Iterator[dict[str, Any]]:
    """The session's entries in our shape (DevDuck and DM files mapped by the loader), its child
    processes' files after its own, one line in memory at a time."""
    return iter_entries(path, issues)


def _follow(
    path: Path,
    sink: Callable[[dict[str, Any]], None],
    idle: Callable[[], None],
    issues: list[fmt.ReadIssue],
    poll: float = 0.2,
) -> None:
    """Hand each entry of a live ``.jsonl`` file to ``sink`` as the file grows (``idle`` when the
    writer pauses), until its ``session.end`` (or Ctrl-C). Each line is read as ``view`` reads it
    (a compact 1.2+ file upgraded to whole entries, ours checked), so the lines say the same."""
    from otel_agent_trace.session_format.checks import BadEntry, check_entry
    from otel_agent_trace.session_format.reader import LineReader

    reader = LineReader()
    ours: bool | None = None
    number = 0
    partial = b""
    with open(path, "rb") as stream:
        while True:
            chunk = stream.readline()
            if chunk and not chunk.endswith(b"\n"):
                partial += chunk  # the writer is mid-line: wait for the rest
                chunk = b""
            elif chunk:
                chunk, partial = partial + chunk, b""
            if not chunk:
                idle()
                time.sleep(poll)
                continue
            number += 1
            if not chunk.strip():
                continue
            entry = reader.entry(chunk.rstrip(b"\r\n"))
            reason = ""
            if entry is None:
                try:
                    reason = f"expected a JSON object, got {type(orjson.loads(chunk)).__name__}"
                except orjson.JSONDecodeError as exc:
                    reason = f"not JSON ({exc})"
            else:
                if ours is None:  # told from the first entry, as the reader does
                    ours = "type" in entry or ("event_type" not in entry and "event" not in entry)
                if ours:
                    try:
                        entry = check_entry(entry)
                    except BadEntry as exc:
                        entry, reason = None, f"{exc}; skipped"
            if entry is None:
                issue = fmt.ReadIssue(str(path), number, reason)
                issues.append(issue)
                print(f"warning: {term.clean(issue)}", file=sys.stderr, flush=True)
                continue
            sink(entry)
            if entry.get("type") == fmt.SESSION_END:
                return


class _JsonLines:
    """``--json``: the entries that pass the filters, one object a line (levels for ``--depth``)."""

    def __init__(self, out: IO[str], keep: _Filter):
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
        if self.keep.keeps(entry, level, error=bool(_status(entry, False))):
            self.out.write(term.json_line(entry))

    def flush(self, keep_pending: int = 0) -> None:
        self.out.flush()

    def finish(self) -> None:
        self.out.flush()


def run(args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser()
    _check_input(path)
    other = None if args.other is None else Path(args.other).expanduser()
    if other is not None:
        if not args.html:
            print("otel-agent-trace: view shows a second session only with --html OUT", file=sys.stderr)
            return 2
        _check_input(other)
    if args.html:
        from otel_agent_trace.offline.html import write_compare_html, write_html

        target = Path(args.html)
        try:  # the name is ours, or refused: never overwritten (as report -o, fork, export)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            print(
                f"otel-agent-trace: {term.clean(target)} exists: view --html never overwrites a file",
                file=sys.stderr,
            )
            return 2
        except OSError as exc:
            print(
                f"otel-agent-trace: {term.clean(target)}: {term.clean(exc.strerror or exc)}", file=sys.stderr
            )
            return 2
        try:
            # written beside it, then renamed over the empty file
            if other is None:
                out = write_html(path, target, lenient=args.lenient)
            else:
                out = write_compare_html(path, other, target, lenient=args.lenient)
        except BaseException:
            target.unlink(missing_ok=True)  # bad input leaves no page
            raise
        if args.json:
            written = {"session": str(path), "html": str(out)}
            if other is not None:
                written["other"] = str(other)
            sys.stdout.write(term.json_document(written))
        else:
            print(f"wrote {term.clean(out)}")
        return 0
    issues: list[fmt.ReadIssue] = []
    keep = _Filter(args)
    out = sys.stdout
    columns = None if args.full else term.width(out)
    printer: TreePrinter | _JsonLines
    printer = _JsonLines(out, keep) if args.json else TreePrinter(out, keep, full=args.full, columns=columns)
    reported = 0
    if args.follow and path.suffix == fmt.JSONL_SUFFIX:

        def idle() -> None:
            printer.flush(0)
            out.flush()

        try:
            _follow(path, printer.add, idle, issues)
        except KeyboardInterrupt:
            pass
        reported = len(issues)  # already told, as they came
    else:
        for entry in _entries(path, issues):
            printer.add(entry)
    printer.finish()
    count = printer.count
    out.flush()
    bad = [issue for issue in issues if not issue.reason.startswith("torn")]
    if args.lenient:
        for issue in issues:
            if issue.reason.startswith("torn"):
                print(f"warning: {term.clean(issue)}", file=sys.stderr)
        if bad:
            print(f"warning: {term.clean(path)}: skipped {len(bad)} bad line(s)", file=sys.stderr)
    else:
        for issue in issues[reported:]:
            print(f"warning: {term.clean(issue)}", file=sys.stderr)
    if count == 0:
        raise fmt.SessionFormatError(path, None, "no session entries")
    # A torn last line is what a killed writer leaves: expected. Any other bad line is not.
    return 1 if bad and not args.lenient else 0
