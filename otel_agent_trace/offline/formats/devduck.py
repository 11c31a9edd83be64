"""DevDuck's session ZIP (devduck 1.15.7): ``events.jsonl`` lines of
``{"timestamp_ns", "layer", "event_type", "data", "trace_id"}`` with no ids. Each event becomes an
entry of its own type (``file.open``, ``tool.call``, ``snapshot.created``, …) with id
``devduck-0000``, ``devduck-0001``, … (by position) under the ``session.start`` event, and
``data``'s fields beside ours. ``session.pkl`` is never read.

DevDuck keeps its events in a ring of :data:`RING` and drops the oldest silently, ``session.start``
first. A file whose first event is not ``session.start`` lost its start: its events have no parent
(none of them is the parent of the others), and its first entry carries what ``metadata.json``
says of the session (``session_id``, ``total_events``) as ``evicted_start``, so readers name the
session and count what was dropped (:func:`evicted_count`).

Loaded (:mod:`..loader`), ``tool.call`` / ``tool.result`` pairs (matched by tool name, in order)
are spans (:func:`spans`); the conversation is the last snapshot's messages, then later
``message`` events (their previews). Analysed (:func:`as_ours`), ``tool.call`` / ``tool.result``
or ``tool.error`` pairs are tool calls, a result carrying an error a failed one; ``file.*`` events
are file events under the tool call running then; ``http.*`` events are HTTP requests and
``process.*`` / ``subprocess.*`` events processes (a status of 400 or more, an error or a non-zero
exit code is a failure); ``message`` events are messages (their 500-character preview),
``snapshot.created`` snapshots, ``session.stop`` the end with its duration. A file whose
``session.start`` the ring dropped is named by its ``metadata.json``; its session start is then
made up there, flagged ``evicted_start`` (it is no entry of the file, and the file has no start),
and its metadata says how many events the ring dropped (``events_evicted``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import Source

from ..jsonvalue import JSONValue
from . import _common, ours
from ._checks import BadEntry, flatten, integer, mapping, text
from .protocol import Session
from .records import Event, Heading, SpanRecord

NAME = "devduck"
START = "session.start"
END_TYPES = frozenset({"session.stop"})
RING = 10_000  # devduck 1.15.7's EventBuffer(max_events=10000)
EVICTED_START_KEYS = ("session_id", "total_events")
SNAPSHOT_TYPES = frozenset({"snapshot.created"})
SNAPSHOT_NAME = "snapshot"
SNAPSHOTS_HOLD_CONVERSATION = True  # snapshots.json: each snapshot's messages whole
FORKS_IN_OWN_LINES = False
RECORD_RESUMABLE = "keep the DevDuck session ZIP with its snapshots.json"
LAYERS = frozenset({"agent", "tool", "sys"})

session_id = _common.session_id
tier = _common.tier
child_files = _common.no_child_files
fork_name = _common.fork_of_ours  # a branch of its events as our entries (no snapshots.json)
fork_lines = _common.no_own_fork


def unresumable(session: Session) -> str | None:
    """A DevDuck ZIP's snapshots hold their messages whole: resume asks them."""
    return None


def heading(first: dict[str, Any], file_base: str) -> Heading | None:
    """DevDuck's ``events.jsonl`` unzipped: no session id in it (named by the file)."""
    if "event_type" not in first or "type" in first:
        return None
    return Heading(None, first.get("timestamp_ns"), b'"session.stop"')


def listed_end(entry: dict[str, Any]) -> tuple[float | None, str] | None:
    return (None, "") if entry.get("event_type") == "session.stop" else None


def matches_archive(metadata: dict[str, Any]) -> bool:
    """Any session ZIP that does not say it is ours (DevDuck's ``metadata.json`` says no format)."""
    return bool(metadata) and metadata.get("format") != fmt.FORMAT_NAME


def matches(raw: dict[str, Any]) -> bool:
    return "event_type" in raw and "timestamp_ns" in raw and "type" not in raw


class Normalizer:
    def __init__(self, metadata: dict[str, Any] | None = None) -> None:
        self.seq = 0
        self.root = ""
        self.metadata = metadata  # the ZIP's metadata.json, when there is one

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        if "event_type" not in raw:
            raise BadEntry("not a DevDuck event (no 'event_type')")
        ts = integer(raw, "timestamp_ns", required=True)
        kind = text(raw, "event_type", required=True)
        layer = text(raw, "layer", default="")
        data = mapping(raw, "data")
        entry_id = f"devduck-{self.seq:04d}"
        self.seq += 1
        entry: dict[str, Any] = {
            "id": entry_id,
            "parent_id": self.root,
            "type": kind,
            "layer": layer,
            "ts": ts,
            "trace_id": text(raw, "trace_id"),
        }
        if self.seq == 1:
            if kind == START:
                self.root = entry_id
            elif self.metadata:  # the ring dropped session.start: the session is named here
                entry["evicted_start"] = {k: self.metadata.get(k) for k in EVICTED_START_KEYS}
        return flatten(entry, data)


def normalizer(source: Source | None) -> Normalizer:
    """Told what the ZIP's ``metadata.json`` says (a ring may have lost the start)."""
    return Normalizer(None if source is None else _archive_metadata(source))


def _archive_metadata(source: Source) -> dict[str, Any] | None:
    """A ZIP's ``metadata.json`` (``None`` when there is none, or it is no JSON object: what is
    wrong with it is said where the ZIP's members are read)."""
    if source.archive is None:
        return None
    try:
        meta: JSONValue = source.archive.read_json(fmt.ZIP_METADATA)
    except fmt.SessionFormatError:
        return None
    return meta if isinstance(meta, dict) else None


def duration_s(events: list[Any], metadata: dict[str, Any]) -> float | None:
    """``session.stop``'s own duration, else ``metadata.json``'s."""
    for event in reversed(events):
        if event.type in END_TYPES:
            value = event.data.get("duration")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    value = metadata.get("duration_seconds")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def evicted_count(present: int, stopped: bool, metadata: dict[str, Any], stop_count: Any = None) -> int:
    """How many events DevDuck's ring dropped: it counted every event recorded before
    ``session.stop`` (``metadata.json``'s ``total_events``, or the stop's own ``events``), the stop
    itself not; ``events.jsonl`` holds ``present`` of them."""
    total = metadata.get("total_events")
    if isinstance(total, bool) or not isinstance(total, int):
        total = stop_count if isinstance(stop_count, int) and not isinstance(stop_count, bool) else None
    if total is None:
        return 0
    return max(total + (1 if stopped else 0) - present, 0)


# --- a loaded session -----------------------------------------------------------------------------


def metadata(session: Session) -> dict[str, Any]:
    return _common.foreign_metadata(session, NAME)


def duration(session: Session) -> float | None:
    """``session.stop``'s own duration, else ``metadata.json``'s, else from the first time to the last."""
    own = duration_s(session.events, session.archive_metadata or {})
    return own if own is not None else _common.stamps_duration(session.events)


def evicted(session: Session) -> int:
    """How many events the ring dropped before ``events.jsonl`` was written."""
    end = session.end_event
    return evicted_count(
        len(session.events),
        end is not None,
        session.archive_metadata or {},
        None if end is None else end.data.get("events"),
    )


def evicted_note(session: Session) -> str:
    meta = session.archive_metadata or {}
    started = "" if session.root.type == START else f", {START} among them"
    return (
        f"{session.path}: DevDuck's ring of {RING:,} events dropped the first "
        f"{evicted(session):,} of this session{started} (metadata.json total_events "
        f"{meta.get('total_events')}, {len(session.events):,} in events.jsonl)"
    )


def spans(events: list[Event]) -> list[SpanRecord]:
    """``tool.call`` / ``tool.result`` pairs (matched by tool name, in order) as spans."""
    out: list[SpanRecord] = []
    open_calls: dict[str, list[SpanRecord]] = {}
    for e in events:
        name = e.data.get("name")
        name = name if isinstance(name, str) else ""
        if e.type == "tool.call":
            rec = SpanRecord(
                span_id=e.id,
                trace_id=e.data.get("trace_id") or "",
                name=f"execute_tool {name}".strip(),
                layer=e.layer or "tool",
                parent_span_id=None,
                start_ns=e.timestamp_ns,
                attributes={"gen_ai.tool.name": name},
                content={"tool_arguments": e.data.get("args")},
                entry_id=e.id,
                parent_entry_id=e.parent_id,
            )
            out.append(rec)
            open_calls.setdefault(name, []).append(rec)
        elif e.type == "tool.result" and open_calls.get(name):
            rec = open_calls[name].pop(0)
            rec.end_ns = max(e.timestamp_ns, rec.start_ns)
            rec.status = fmt.STATUS_UNSET
            rec.content["tool_result"] = e.data.get("result_preview")
    return out


def snapshots(events: list[Event]) -> list[dict[str, Any]]:
    """None but a ZIP's ``snapshots.json`` (its events say only that one was taken)."""
    return []


def conversation(session: Session, until: str | None) -> list[dict[str, Any]]:
    """The last snapshot's messages, then later ``message`` events (their previews)."""

    def restart(e: Event) -> list[dict[str, Any]] | None:
        if e.type not in SNAPSHOT_TYPES:
            return None
        own = e.data.get("snapshot_id")
        snap = next((s for s in session.snapshots if s.get("snapshot_id") == own), None)
        if snap is not None and isinstance(snap.get("agent_messages"), list):
            return list(snap["agent_messages"])
        return None

    return _common.messages_since(session, until, restart)


# --- as our entries (the analysis) --------------------------------------------------------------


def _access(mode: str) -> str:
    if "+" in mode:
        return "readwrite"
    if "a" in mode:
        return "append"
    if "w" in mode or "x" in mode:
        return "write"
    return "read"


def _error_of(data: dict[str, Any]) -> str | None:
    """The error a DevDuck event says happened, if any."""
    error: JSONValue = data.get("error") or data.get("exception")
    if error:
        return ours.text(error if not isinstance(error, dict) else error.get("message") or error)
    status = data.get("status")
    if isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
        return ours.text(data.get("result_preview") or status)
    if data.get("success") is False:
        return ours.text(data.get("result_preview") or "failed")
    return None


def _evicted_start(entry: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The session start of a file whose ``session.start`` the ring dropped, made from
    ``metadata.json``: flagged ``evicted_start`` (no entry of the file: not to be counted as one,
    and the file still has no start)."""
    start = ours.session_start(entry, ours.text(meta.get("session_id")) or entry["id"], NAME, meta)
    start["evicted_start"] = True
    meta["session_start_evicted"] = True
    return start


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def as_ours(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A DevDuck session's events (as :class:`Normalizer` makes them) as ours (nothing is kept but
    the running tool calls)."""
    text_ = ours.text
    started = False
    present = 0
    stopped: dict[str, Any] | None = None
    meta: dict[str, Any] = {}
    calls: dict[str, list[tuple[str, int, Any]]] = {}  # tool name -> running calls (span id, ts, args)
    running: list[str] = []  # span ids of running tool calls, newest last
    for entry in entries:
        present += 1
        event = text_(entry.get("type"))
        ts = entry.get("ts") or 0
        data = entry
        current = running[-1] if running else None
        if not started:
            started = True
            if event == START:
                meta = ours.own(entry)
                yield ours.session_start(entry, text_(meta.get("session_id")) or entry["id"], NAME, meta)
                continue
            saved: JSONValue = entry.get("evicted_start")
            meta = {k: v for k, v in saved.items() if k != "format"} if isinstance(saved, dict) else {}
            yield _evicted_start(entry, meta)
        if event == "session.stop":
            stopped = entry
            yield ours.session_end(entry, ours.seconds_ns(data, ("duration",), ()), len(running))
        elif event == fmt.MESSAGE:
            yield ours.message(entry, "content_preview")
        elif event == "tool.call":
            name = text_(data.get("name")) or "tool"
            calls.setdefault(name, []).append((entry["id"], ts, data.get("args")))
            running.append(entry["id"])
            yield ours.span_start(
                entry,
                f"execute_tool {name}",
                fmt.LAYER_TOOL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name},
            )
        elif event in ("tool.result", "tool.error"):
            name = text_(data.get("name")) or "tool"
            pending = calls.get(name)
            span_id, start, args = pending.pop(0) if pending else (entry["id"], None, None)
            if span_id in running:
                running.remove(span_id)
            took = ours.seconds_ns(data, (), ("duration_ms",))
            if not took and start is not None:
                took = max(ts - start, 0)
            error = _error_of(data) or (
                text_(data.get("result_preview")) or "error" if event == "tool.error" else None
            )
            yield ours.span_end(
                entry,
                f"execute_tool {name}",
                fmt.LAYER_TOOL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name},
                span_id=span_id,
                duration=took,
                error=error,
                content={"tool_arguments": args, "tool_result": data.get("result_preview")},
            )
        elif event.startswith("file."):
            mode = text_(data.get("mode"))
            attrs = {"file.path": text_(data.get("path")), "agent_trace.file.mode": mode}
            if event == "file.open":
                attrs["agent_trace.file.access"] = _access(mode)
            yield ours.event(entry, event, fmt.LAYER_SYS, current, attrs)
        elif event.startswith("http."):
            url = text_(data.get("url"))
            method = text_(data.get("method")) or event.removeprefix("http.").upper()
            attrs: dict[str, Any] = {
                semconv.HTTP_REQUEST_METHOD: method,
                "url.full": url,
                semconv.SERVER_ADDRESS: _host(url),
            }
            code = ours.integer(data, "status_code", "status")
            if code is not None:
                attrs[semconv.HTTP_RESPONSE_STATUS_CODE] = code
            yield ours.span_end(
                entry,
                method,
                fmt.LAYER_SYS,
                attrs,
                parent=current,
                duration=ours.seconds_ns(data, (), ("duration_ms",)),
                error=_error_of(data),
            )
        elif event.startswith(("process.", "subprocess.")) or event in ("process", "subprocess"):
            command: JSONValue = data.get("command") or data.get("args") or data.get("cmd")
            argv = command if isinstance(command, list) else text_(command).split()
            attrs = {
                semconv.PROCESS_COMMAND_ARGS: [text_(a) for a in argv],
                "process.executable.name": text_(argv[0]).rsplit("/", 1)[-1] if argv else "",
            }
            code = ours.integer(data, "returncode", "exit_code")
            if code is not None:
                attrs[semconv.PROCESS_EXIT_CODE] = code
            yield ours.span_end(
                entry,
                f"process {attrs['process.executable.name']}".strip(),
                fmt.LAYER_SYS,
                attrs,
                parent=current,
                duration=ours.seconds_ns(data, ("duration",), ("duration_ms",)),
                error=_error_of(data),
            )
        elif event in SNAPSHOT_TYPES:
            yield ours.snapshot(entry)
        else:
            yield ours.event(entry, event, text_(entry.get("layer")) or fmt.LAYER_AGENT, current, {})
    if meta.get("session_start_evicted"):  # how many the ring dropped (as the loader counts them)
        meta["events_present"] = present
        meta["events_evicted"] = evicted_count(
            present, stopped is not None, meta, None if stopped is None else stopped.get("events")
        )
