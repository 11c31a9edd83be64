"""``view --html``: a session as one self-contained HTML page — the waterfall of its spans (coloured
by layer, span events as ticks, tokens and tool names on the rows, snapshots on the time axis), a
minimap to zoom to a time range, search and filters, a span's details on click, and the
conversation as chat bubbles: a model call's messages, or the conversation as it stood at any span
or snapshot (the text from a checkpoint-tier file; lengths and SHA-256 from a shareable one), each
tool call linked to its span. ``diff --html``: two runs on one page, their tool calls aligned as
``diff`` aligns them, each run's page a tab.

The page needs no network (CSS and script inline, no fonts or images fetched). Every value from
the file reaches the page as data inside ``<script type="application/json">`` blocks (with ``<``,
``>`` and ``&`` escaped) and is put into the page with ``textContent`` only, so a span name or
attribute can never become markup or script.

The page is written as the session is read, span by span as each ends (messages and turns of the
conversation to spool files copied in at the end): memory holds only the spans running at a time,
whatever the file's size. What the page embeds is bounded, and the page says what was left out:
the first :data:`MAX_SPANS` spans (in start order) are drawn, the rest counted; a text value longer
than :data:`MAX_VALUE_CHARS` is cut, a list or object past :data:`MAX_ITEMS` items shortened, a
span's events past :data:`MAX_EVENTS` counted, messages and turns past theirs
(:mod:`._conversation`) counted (``otel-agent-trace view --full SESSION`` prints everything).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import iter_entries, session_format_of

from ..jsonvalue import JSONValue
from ._conversation import Conversation
from ._template import HEAD, SCRIPT

MAX_SPANS = 20_000  # past this the page would be too slow to use; the rest is counted, not drawn
MAX_VALUE_CHARS = 4_000  # a longer text value is cut (the page says how much was left out)
MAX_ITEMS = 200  # items of a list or object kept
MAX_EVENTS = 200  # events kept per span
MAX_TOOLS = 200  # tool names offered by the page's tool filter
_DEPTH = 20
# Content keys of a model call that list its messages: the conversation shows them, the span's
# details say how many.
_MESSAGE_LISTS = ("input_message_ids", "output_message_ids")


def _json_for_script(value: Any) -> str:
    """JSON that cannot end the ``<script>`` block it sits in, nor open a comment or entity."""
    text = orjson.dumps(value, default=str).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Cuts:
    """How much of the file's values the page left out."""

    def __init__(self) -> None:
        self.values = 0
        self.items = 0
        self.events = 0

    def bounded(self, value: JSONValue, depth: int = 0) -> JSONValue:
        """``value`` with long texts cut and long lists and objects shortened (counted)."""
        if isinstance(value, str):
            if len(value) <= MAX_VALUE_CHARS:
                return value
            self.values += 1
            return f"{value[:MAX_VALUE_CHARS]}… [{len(value) - MAX_VALUE_CHARS} more characters]"
        if isinstance(value, dict):
            if depth >= _DEPTH:
                self.values += 1
                return "[nested too deep]"
            out: dict[str, JSONValue] = {}
            for number, (key, item) in enumerate(value.items()):
                if number >= MAX_ITEMS:
                    self.items += 1
                    out["…"] = f"[{len(value) - MAX_ITEMS} more keys]"
                    break
                out[str(key)[:MAX_VALUE_CHARS]] = self.bounded(item, depth + 1)
            return out
        if isinstance(value, list):
            if depth >= _DEPTH:
                self.values += 1
                return "[nested too deep]"
            kept = [self.bounded(item, depth + 1) for item in value[:MAX_ITEMS]]
            if len(value) > MAX_ITEMS:
                self.items += 1
                kept.append(f"[{len(value) - MAX_ITEMS} more items]")
            return kept
        return value


def _ts(entry: dict[str, Any]) -> int:
    ts = entry.get("ts")
    return ts if type(ts) is int and ts > 0 else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Page:
    """The spans of a session, written to the page's span block as they end."""

    def __init__(self, out: IO[str], conversation_files: tuple[IO[str], IO[str]]) -> None:
        self.out = out
        self.cuts = _Cuts()
        self.conversation = Conversation(*conversation_files, self.cuts, _json_for_script)
        self.trace_ids: list[str] = []  # the first few trace ids seen
        self.tools: dict[str, None] = {}  # tool names, in order of first call
        self.base = 0  # the first entry's time: span times are written relative to it
        self.low = 0  # the earliest span start, relative to ``base`` (the page's time zero)
        self.last = 0
        self.open: dict[str, dict[str, Any] | None] = {}  # running spans (None: counted, not drawn)
        self.drawn_ids: set[str] = set()  # the drawn spans that ended (a second end is ignored)
        self.started = self.total = self.written = self.entries = 0
        self.session_id = ""
        self.tier = ""
        self.complete = False

    def take(self, entry: dict[str, Any]) -> None:
        self.entries += 1
        ts = _ts(entry)
        if ts:
            if not self.base:
                self.base = ts
            if ts > self.last:
                self.last = ts
        kind = entry.get("type")
        trace_id = entry.get("trace_id")
        if isinstance(trace_id, str) and trace_id not in self.trace_ids and len(self.trace_ids) < 5:
            self.trace_ids.append(trace_id)
        if kind == fmt.SPAN_START:
            sid = _str(entry.get("span_id"))
            if sid is not None and sid not in self.open:
                self.total += 1
                self.open[sid] = self._record(entry, ts) if self.started < MAX_SPANS else None
        elif kind == fmt.SPAN_END:
            self._end(entry, ts)
        elif kind == fmt.SPAN_EVENT:
            record = self.open.get(_str(entry.get("span_id")) or "")
            if record is not None:
                if len(record["events"]) < MAX_EVENTS:
                    event = {
                        "name": entry.get("name"),
                        "at": self._rel(ts or self.base),
                        "attributes": self.cuts.bounded(entry.get("attributes")),
                    }
                    record["events"].append(event)
                else:
                    record["events_left_out"] += 1
                    self.cuts.events += 1
        elif kind == fmt.MESSAGE:
            self.conversation.message(entry, self._rel(ts))
        elif kind == fmt.SNAPSHOT:
            self.conversation.snapshot(entry, self._rel(ts))
        elif kind == fmt.SESSION_START and not self.session_id:
            self.session_id = _str(entry.get("session_id")) or ""
            self.tier = _str(entry.get("tier")) or ""
        elif kind == fmt.SESSION_END:
            self.complete = True

    def _rel(self, ts: int) -> int:
        return ts - self.base if ts else 0

    def _record(self, entry: dict[str, Any], start: int) -> dict[str, Any]:
        self.started += 1
        attributes: JSONValue = entry.get("attributes")
        return {
            "id": entry.get("span_id"),
            "parent": _str(entry.get("parent_span_id")),
            "entry": _str(entry.get("id")),
            "name": _str(entry.get("name")) or "",
            "layer": _str(entry.get("layer")) or "",
            "kind": _str(entry.get("kind")),
            "start": self._rel(start),
            "end": None,
            "finished": False,
            "status": fmt.STATUS_UNFINISHED,
            "status_description": None,
            "attributes": self.cuts.bounded(attributes) if isinstance(attributes, dict) else {},
            "content": {},
            "events": [],
            "events_left_out": 0,
        }

    def _end(self, entry: dict[str, Any], ts: int) -> None:
        sid = _str(entry.get("span_id"))
        if sid is None:
            return
        if sid in self.open:
            record = self.open.pop(sid)
        elif sid in self.drawn_ids:
            return  # ended twice (a forked child ending a span it inherited): the first end
        else:  # a span that ended before its start was written: its end says all
            self.total += 1
            if self.started >= MAX_SPANS:
                return
            duration = entry.get("duration_ns")
            start = ts - duration if type(duration) is int and 0 <= duration <= ts else ts
            record = self._record(entry, start)
        if record is None:
            return
        record["end"] = self._rel(ts) if ts else record["start"]
        record["finished"] = True
        status: JSONValue = entry.get("status")
        status = status if isinstance(status, dict) else {}
        record["status"] = _str(status.get("code")) or fmt.STATUS_UNSET
        record["status_description"] = self.cuts.bounded(_str(status.get("description")))
        attributes: JSONValue = entry.get("attributes")
        if isinstance(attributes, dict):
            record["attributes"].update(self.cuts.bounded(attributes))
        content: JSONValue = entry.get("content")
        if isinstance(content, dict):
            if any(isinstance(content.get(key), list) for key in _MESSAGE_LISTS):
                self.conversation.call(sid, record["end"], content)
                content = {
                    key: f"{len(value)} messages (see the conversation)" if isinstance(value, list) else value
                    for key, value in content.items()
                }
            record["content"] = self.cuts.bounded(content)
        tool = record["attributes"].get("gen_ai.tool.name")
        if isinstance(tool, str) and len(self.tools) < MAX_TOOLS:
            self.tools[tool] = None
        self.drawn_ids.add(sid)
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        if record["start"] < self.low:
            self.low = record["start"]
        self.out.write("," if self.written else "")
        self.out.write(_json_for_script(record))
        self.written += 1

    def finish(self) -> dict[str, Any]:
        """Write the spans still running (unfinished, to the session's last time); the facts."""
        last = self._rel(self.last)
        for record in self.open.values():
            if record is not None:
                record["end"] = max(last, record["start"])
                self._write(record)
        self.open.clear()
        return {
            "t0": self.low,
            "duration_ns": max(last - self.low, 0),
            "spans_total": self.total,
            "entries": self.entries,
            "max_spans": MAX_SPANS,
            "values_cut": self.cuts.values,
            "lists_shortened": self.cuts.items,
            "events_left_out": self.cuts.events,
            "max_value_chars": MAX_VALUE_CHARS,
            "trace_ids": self.trace_ids,
            "tools": list(self.tools),
            **self.conversation.facts(),
        }


def _block(out: IO[str], block_id: str, body: str | None = None) -> None:
    out.write(f'<script type="application/json" id="{block_id}">')
    if body is not None:
        out.write(body + "</script>\n")


def _write_run(
    out: IO[str], path: str | os.PathLike[str], prefix: str, spool_dir: Path, lenient: bool
) -> dict[str, Any]:
    """One session's blocks — ``PREFIX-spans``, ``-messages``, ``-turns``, ``-data`` — written as
    it is read; its facts returned. A bad line is an error, or with ``lenient`` skipped and
    counted (a torn last line is skipped and counted either way)."""
    from otel_agent_trace.offline.analysis import foreign

    source = Path(path).expanduser()
    module = session_format_of(source)
    issues: list[fmt.ReadIssue] = []
    entries = iter_entries(source, issues, strict=False, lenient=lenient)
    entries = foreign.as_ours(module, entries)  # (ours: as they are)
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", dir=spool_dir) as messages,
        tempfile.TemporaryFile("w+", encoding="utf-8", dir=spool_dir) as turns,
    ):
        _block(out, f"{prefix}-spans")
        out.write("[")
        page = _Page(out, (messages, turns))
        for entry in entries:
            page.take(entry)
        if not page.entries:
            raise fmt.SessionFormatError(source, None, "no session entries")
        facts = page.finish()
        out.write("]</script>\n")
        for name, spool in (("messages", messages), ("turns", turns)):
            _block(out, f"{prefix}-{name}")
            out.write("[")
            spool.seek(0)
            shutil.copyfileobj(spool, out)
            out.write("]</script>\n")
    name = source.name
    for suffix in (fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
        name = name.removesuffix(suffix)
    facts.update(
        session_id=page.session_id or name,
        tier=page.tier or "trace",
        complete=page.complete,
        path=source.name,
        format=module.NAME,
        bad_lines=sum(1 for issue in issues if not issue.reason.startswith("torn")),
        torn_last_line=any(issue.reason.startswith("torn") for issue in issues),
    )
    _block(out, f"{prefix}-data", _json_for_script(facts))
    return facts


def _write_page(
    out: str | os.PathLike[str],
    paths: list[str | os.PathLike[str]],
    compare: Any = None,
    lenient: bool = False,
) -> Path:
    """The page of the sessions at ``paths`` (with the comparison ``compare()`` gives) to ``out``.

    Each session is read once, as a stream; the page goes to a temporary file beside ``out``
    (owner-only while written, and after when a session holds message text), renamed into place at
    the end: bad input leaves no page.
    """
    target = Path(out)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(
            os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8"
        ) as page_file:
            page_file.write(HEAD)
            texts = False
            for number, path in enumerate(paths):
                prefix = "session" if number == 0 else "other"
                facts = _write_run(page_file, path, prefix, target.parent, lenient)
                texts = texts or facts["full_text"]
            if compare is not None:
                _block(page_file, "compare-data", _json_for_script(compare()))
            page_file.write(SCRIPT)
        if not texts:  # no message text: as readable as any file the user writes
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def write_html(path: str | os.PathLike[str], out: str | os.PathLike[str], *, lenient: bool = False) -> Path:
    """Write the page of the session at ``path`` to ``out`` (a new file or one to replace); a bad
    line is an error (:class:`SessionFormatError` naming file and line), or with ``lenient``
    skipped and counted on the page."""
    return _write_page(out, [path], lenient=lenient)


def comparison(
    base: str | os.PathLike[str], candidate: str | os.PathLike[str], *, strict: bool = False
) -> dict[str, Any]:
    """What ``diff`` finds, with the aligned rows the page shows (:func:`._compare.comparison`)."""
    from ._compare import comparison as compare

    return compare(base, candidate, strict=strict)


def write_compare_html(
    base: str | os.PathLike[str],
    candidate: str | os.PathLike[str],
    out: str | os.PathLike[str],
    compared: dict[str, Any] | None = None,
    *,
    lenient: bool = False,
) -> Path:
    """Write the page of two runs to ``out``: what ``diff`` finds (``compared``, from
    :func:`comparison`, when the caller has it already), their tool calls aligned, and each run's
    own page as a tab (``lenient`` as for :func:`write_html`)."""
    return _write_page(out, [base, candidate], lambda: compared or comparison(base, candidate), lenient)


__all__ = [
    "MAX_EVENTS",
    "MAX_ITEMS",
    "MAX_SPANS",
    "MAX_VALUE_CHARS",
    "comparison",
    "write_compare_html",
    "write_html",
]
