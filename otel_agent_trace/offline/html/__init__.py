"""``view --html``: a session as one self-contained HTML page — a waterfall timeline with the span
tree beside it, spans coloured by layer, details on click.

The page needs no network (CSS and script inline, no fonts or images fetched). Every value from
the file reaches the page as data inside ``<script type="application/json">`` blocks (with ``<``,
``>`` and ``&`` escaped) and is put into the page with ``textContent`` only, so a span name or
attribute can never become markup or script.

The page is written as the session is read, span by span as each ends: memory holds only the
spans running at a time, whatever the file's size. What the page embeds is bounded, and the
page says what was left out: the first :data:`MAX_SPANS` spans (in start order) are drawn, the
rest counted; a text value longer than :data:`MAX_VALUE_CHARS` is cut, a list or object past
:data:`MAX_ITEMS` items shortened, a span's events past :data:`MAX_EVENTS` counted
(``otel-agent-trace view --full SESSION`` prints everything).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import iter_entries, session_format_of

from ._template import PAGE

MAX_SPANS = 20_000  # past this the page would be too slow to use; the rest is counted, not drawn
MAX_VALUE_CHARS = 4_000  # a longer text value is cut (the page says how much was left out)
MAX_ITEMS = 200  # items of a list or object kept
MAX_EVENTS = 200  # events kept per span
_DEPTH = 20

_SPANS_MARK = "__SPANS_JSON__"
_DATA_MARK = "__DATA_JSON__"


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

    def bounded(self, value: Any, depth: int = 0) -> Any:
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
            out = {}
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

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.cuts = _Cuts()
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
        elif kind == fmt.SESSION_START and not self.session_id:
            self.session_id = _str(entry.get("session_id")) or ""
            self.tier = _str(entry.get("tier")) or ""
        elif kind == fmt.SESSION_END:
            self.complete = True

    def _rel(self, ts: int) -> int:
        return ts - self.base if ts else 0

    def _record(self, entry: dict[str, Any], start: int) -> dict[str, Any]:
        self.started += 1
        attributes = entry.get("attributes")
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
            known = type(duration) is int and 0 <= duration <= ts
            record = self._record(entry, ts - duration if known else ts)
        if record is None:
            return
        record["end"] = self._rel(ts) if ts else record["start"]
        record["finished"] = True
        status = entry.get("status")
        status = status if isinstance(status, dict) else {}
        record["status"] = _str(status.get("code")) or fmt.STATUS_UNSET
        record["status_description"] = self.cuts.bounded(_str(status.get("description")))
        attributes = entry.get("attributes")
        if isinstance(attributes, dict):
            record["attributes"].update(self.cuts.bounded(attributes))
        content = entry.get("content")
        if isinstance(content, dict):
            record["content"] = self.cuts.bounded(content)
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
        }


def write_html(path: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the page of the session at ``path`` to ``out`` (a new file or one to replace).

    The session is read once, as a stream; the page goes to a temporary file beside ``out``,
    renamed into place at the end (bad input leaves no page).
    """
    from otel_agent_trace.offline import formats
    from otel_agent_trace.offline.analysis import foreign

    source = Path(path).expanduser()
    module = session_format_of(source)
    entries = iter_entries(source, [], strict=False, lenient=False)
    if module is formats.dm:
        entries = foreign.dm_entries(entries)
    elif module is formats.devduck:
        entries = foreign.devduck_entries(entries)
    target = Path(out)
    head, rest = PAGE.split(_SPANS_MARK)
    middle, tail = rest.split(_DATA_MARK)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as page_file:
            page_file.write(head)
            page_file.write("[")
            page = _Page(page_file)
            for entry in entries:
                page.take(entry)
            if not page.entries:
                raise fmt.SessionFormatError(source, None, "no session entries")
            facts = page.finish()
            page_file.write("]")
            page_file.write(middle)
            name = source.name
            for suffix in (fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
                name = name.removesuffix(suffix)
            facts.update(
                session_id=page.session_id or name,
                tier=page.tier or "trace",
                complete=page.complete,
                path=source.name,
                format=module.NAME,
            )
            page_file.write(_json_for_script(facts))
            page_file.write(tail)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


__all__ = ["MAX_EVENTS", "MAX_ITEMS", "MAX_SPANS", "MAX_VALUE_CHARS", "write_html"]
