"""Reading sessions back: our JSONL (complete, live or cut short, with its child processes'
files), our ZIP, a directory, DevDuck's session ZIPs and DM-Code-Agent's JSONL. Never runs code
from a file (JSON only, no pickle) and writes nothing.

Bad input is a :class:`~otel_agent_trace.session_format.SessionFormatError` naming file and line;
what is tolerated (a torn last line; with ``lenient=True`` bad lines; duplicate ids, dangling
parents, parent cycles) is listed in ``LoadedSession.issues`` and reported as a
:class:`SessionReadWarning`.
"""

from __future__ import annotations

import gc
import os
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import (
    ReadIssue,
    Source,
    child_files,
    iter_lines,
    open_regular,
    open_source,
)
from otel_agent_trace.session_format.views import MESSAGE_ENTRY_KEYS

from . import formats
from .formats import BadEntry, devduck, dm, native
from .terminal import clean


class SessionReadWarning(UserWarning):
    """A session file had something the reader tolerated (a torn last line, a skipped bad line)."""


class EntryLookupError(LookupError):
    """No entry, or several, match an id or id prefix; the message lists the candidates."""


@dataclass(slots=True)
class Event:
    """One entry, with DevDuck's field names (``timestamp_ns``, ``layer``, ``event_type``, ``data``)."""

    id: str
    parent_id: str
    type: str
    layer: str
    timestamp_ns: int
    data: dict[str, Any]

    @property
    def event_type(self) -> str:
        """The event's name for span events (``file.open``, …), otherwise the entry type."""
        if self.type == fmt.SPAN_EVENT:
            name = self.data.get("name")
            return name if isinstance(name, str) else self.type
        return self.type

    @property
    def trace_id(self) -> str | None:
        return self.data.get("trace_id")

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Event:
        return cls(
            id=str(entry.get("id", "")),
            parent_id=str(entry.get("parent_id") or ""),
            type=str(entry.get("type", "")),
            layer=str(entry.get("layer") or ""),
            timestamp_ns=int(entry.get("ts") or 0),
            data=entry,
        )


@dataclass
class SpanRecord:
    """A span put back together from its ``span.start`` / ``span.end`` entries."""

    span_id: str
    trace_id: str
    name: str
    layer: str
    parent_span_id: str | None
    start_ns: int
    end_ns: int | None = None
    status: str = fmt.STATUS_UNFINISHED
    status_description: str | None = None
    kind: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    entry_id: str = ""
    parent_entry_id: str = ""

    @property
    def finished(self) -> bool:
        return self.end_ns is not None

    @property
    def duration_ns(self) -> int | None:
        return None if self.end_ns is None else self.end_ns - self.start_ns

    @property
    def duration_s(self) -> float | None:
        return None if self.end_ns is None else (self.end_ns - self.start_ns) / 1e9


@contextmanager
def _no_gc() -> Iterator[None]:
    """No cyclic garbage collection while a session's (acyclic) entries are built: on a 100 MB
    session the collector's passes over the growing heap would double the load time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- streaming ------------------------------------------------------------------------------------

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")
_CHILD_FILE = re.compile(r"\.p\d+(\.checkpoint)?\.jsonl$")


def _entries_of(
    stream: Any,
    name: str,
    issues: list[ReadIssue],
    lenient: bool,
    normalizer: Any | None,
    module: ModuleType | None,
    source: Source | None = None,
) -> Iterator[tuple[ModuleType, dict[str, Any]]]:
    """The entries of one file, each normalised by its format (told from its first entry)."""
    for line, raw in iter_lines(stream, name, issues=issues, strict=not lenient):
        if module is None:
            module = formats.detect(raw)
            if module is devduck:  # told what its metadata.json says (a ring may have lost the start)
                normalizer = devduck.Normalizer(None if source is None else _devduck_metadata(source))
            else:
                normalizer = module.Normalizer()
        try:
            entry = normalizer.normalize(raw)  # type: ignore[union-attr]
        except BadEntry as exc:
            if not lenient:
                raise fmt.SessionFormatError(name, line, str(exc)) from None
            issues.append(ReadIssue(name, line, f"{exc}; skipped"))
            continue
        yield module, entry


def _devduck_metadata(source: Source) -> dict[str, Any] | None:
    """A DevDuck ZIP's ``metadata.json`` (``None`` when there is none, or it is no JSON object:
    what is wrong with it is said where the ZIP's members are read)."""
    if source.archive is None:
        return None
    try:
        meta = source.archive.read_json(fmt.ZIP_METADATA)
    except fmt.SessionFormatError:
        return None
    return meta if isinstance(meta, dict) else None


def _stream(
    path: Path,
    issues: list[ReadIssue],
    *,
    lenient: bool,
    children: bool = True,
    on_source: Callable[[Source], None] | None = None,
) -> Iterator[tuple[ModuleType, dict[str, Any]]]:
    """Every entry of a session, normalised: its file (or ZIP, or unpacked ZIP directory), then,
    for our JSONL named by its session id, its child processes' files, as the ZIP orders them."""
    root: dict[str, Any] | None = None
    module: ModuleType | None = None
    with open_source(path) as source:
        if on_source is not None:
            on_source(source)
        for module, entry in _entries_of(source.stream, source.name, issues, lenient, None, None, source):
            root = root or entry
            yield module, entry
        in_archive = source.archive is not None
    if not children or in_archive or module is not native or root is None:
        return
    if root.get("type") != fmt.SESSION_START:
        return
    session_id, tier = root.get("session_id"), root.get("tier") or "trace"
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id):
        return
    if path.name != fmt.session_file_name(session_id, tier):
        return  # children are found only beside the file named by the session
    for child in child_files(path.parent, session_id, path, tier, issues)[1:]:
        with open_regular(child) as stream:
            yield from _entries_of(stream, str(child), issues, lenient, native.Normalizer(), native)


def iter_entries(
    path: str | os.PathLike[str],
    issues: list[ReadIssue] | None = None,
    *,
    strict: bool = False,
    lenient: bool | None = None,
    children: bool = True,
) -> Iterator[dict[str, Any]]:
    """Stream a session's entries, one line in memory at a time, in our entry shape whatever the
    format (DevDuck and DM events mapped as :func:`load_session` maps them), child files included.

    A torn last line is skipped and noted in ``issues``. A bad line raises
    :class:`SessionFormatError` naming file and line, unless ``lenient`` (by default: ``issues``
    given and not ``strict``), then it is skipped and noted.
    """
    if lenient is None:
        lenient = issues is not None and not strict
    path = _resolve(Path(path).expanduser())
    yield from (
        entry
        for _, entry in _stream(path, [] if issues is None else issues, lenient=lenient, children=children)
    )


def session_format_of(path: str | os.PathLike[str]) -> ModuleType:
    """The format of a session (:mod:`.formats` module), told from its first entry; only that
    entry is read."""
    for module, _ in _stream(_resolve(Path(path).expanduser()), [], lenient=True, children=False):
        return module
    return native


def iter_events(
    path: str | os.PathLike[str], issues: list[ReadIssue] | None = None, **kwargs: Any
) -> Iterator[Event]:
    """:func:`iter_entries` as :class:`Event` objects."""
    for entry in iter_entries(path, issues, **kwargs):
        yield Event.from_entry(entry)


def _resolve(path: Path) -> Path:
    """A directory stands for the one session in it (an unpacked ZIP is read as it is)."""
    if not path.is_dir() or (path / fmt.ZIP_EVENTS).exists():
        return path
    found: dict[str, Path] = {}
    for candidate in sorted(path.iterdir()):
        name = candidate.name
        if name.startswith(".") or _CHILD_FILE.search(name) or not candidate.is_file():
            continue
        for suffix in (fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
            if name.endswith(suffix):
                found.setdefault(name[: -len(suffix)], candidate)  # .jsonl sorts before .zip
    if not found:
        raise fmt.SessionFormatError(path, None, "a directory with no session file (.jsonl or .zip) in it")
    if len(found) > 1:
        names = ", ".join(p.name for p in list(found.values())[:10])
        raise fmt.SessionFormatError(path, None, f"a directory of {len(found)} sessions ({names}): name one")
    return next(iter(found.values()))


# --- the loaded session -------------------------------------------------------------------------

# Fields whose text repeats from entry to entry (kept once in a LoadedSession: a fifth of its memory).
# Entries a LoadedSession holds at most unless told otherwise: each costs about 1-2 KB in memory
# (benchmarks/loading.md), so a file of millions (a crashed run's open spans, a file made to
# fill memory) is refused before it takes gigabytes; iter_entries and the analysis stream any size.
MAX_ENTRIES = 200_000

_REPEATED_FIELDS = (
    "type",
    "layer",
    "parent_id",
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "kind",
    "role",
)


class LoadedSession:
    """A recorded session read back whole (its events in memory; :func:`iter_entries` streams)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        strict: bool = False,
        lenient: bool = False,
        children: bool = True,
        max_entries: int | None = MAX_ENTRIES,
    ):
        self.path = _resolve(Path(path).expanduser())
        self.issues: list[ReadIssue] = []
        self._archive_metadata: dict[str, Any] | None = None
        self._archive_snapshots: list[dict[str, Any]] | None = None
        self.format: ModuleType = native
        self.events: list[Event] = []
        append = self.events.append
        shared: dict[str, str] = {}  # one copy of each repeated text (ids of parents, spans, traces)
        one = shared.setdefault
        with _no_gc():  # entries are acyclic: collections while building them only cost time
            for module, entry in _stream(
                self.path, self.issues, lenient=lenient, children=children, on_source=self._read_archive
            ):
                self.format = module
                if max_entries is not None and len(self.events) >= max_entries:
                    raise fmt.SessionFormatError(self.path, None, _too_many(max_entries), too_large=True)
                for key in _REPEATED_FIELDS:
                    value = entry.get(key)
                    if value.__class__ is str:
                        entry[key] = one(value, value)
                append(
                    Event(
                        entry["id"],
                        entry["parent_id"],
                        entry["type"],
                        entry.get("layer") or "",
                        entry["ts"],
                        entry,
                    )
                )
        if not self.events:
            raise fmt.SessionFormatError(self.path, None, "no session entries")
        self._index()
        if self.evicted_events:  # told, not an issue: nothing in the file is wrong, it is lossy
            warnings.warn(clean(self._evicted_note()), SessionReadWarning, stacklevel=3)
        if strict and self.issues:
            first = self.issues[0]
            raise fmt.SessionFormatError(first.path, first.line, f"{first.reason} (strict)")
        for issue in self.issues:  # tolerated, but the reader must hear of it (escaped: a
            # warning reaches a terminal, and its ids and reasons are the file's text)
            warnings.warn(clean(issue), SessionReadWarning, stacklevel=3)

    def _read_archive(self, source: Source) -> None:
        if source.archive is None:
            return
        where = source.archive.path
        meta = source.archive.read_json(fmt.ZIP_METADATA)
        if meta is not None:
            if not isinstance(meta, dict):
                raise fmt.SessionFormatError(
                    f"{where}!{fmt.ZIP_METADATA}", None, f"a JSON {type(meta).__name__}, not an object"
                )
            try:
                native.check_version(meta.get("format_version"))
            except BadEntry as exc:
                raise fmt.SessionFormatError(f"{where}!{fmt.ZIP_METADATA}", None, str(exc)) from None
            self._archive_metadata = meta
        if (
            isinstance(meta, dict)
            and isinstance(meta.get("snapshots_format"), int)
            and meta["snapshots_format"] >= 2
        ):
            return  # its snapshots name their messages by id: built from events.jsonl, as from a .jsonl
        try:
            snaps = source.archive.read_json(fmt.ZIP_SNAPSHOTS)
        except fmt.SessionFormatError as exc:
            if not exc.too_large:
                raise
            # DevDuck's shape repeats every message of every snapshot: past the cap, the same
            # snapshots are built from events.jsonl instead (nothing lost; told, not silent).
            warnings.warn(
                clean(f"{exc}; snapshots built from {fmt.ZIP_EVENTS}"), SessionReadWarning, stacklevel=4
            )
            return
        if snaps is not None:
            if not isinstance(snaps, list) or not all(isinstance(s, dict) for s in snaps):
                raise fmt.SessionFormatError(
                    f"{where}!{fmt.ZIP_SNAPSHOTS}", None, "not a list of snapshot objects"
                )
            self._archive_snapshots = snaps

    def _index(self) -> None:
        """Ids, children and the tree's defects (duplicate ids, dangling parents, cycles)."""
        self._by_id: dict[str, Event] = {}
        self._children: dict[str, list[Event]] = {}
        duplicates: list[str] = []
        for event in self.events:
            if event.id in self._by_id:
                duplicates.append(event.id)
            else:
                self._by_id[event.id] = event
            if event.parent_id:
                self._children.setdefault(event.parent_id, []).append(event)
        dangling = [  # a child file's session.join hangs under an entry of its parent's file
            e.id
            for e in self.events
            if e.parent_id and e.parent_id not in self._by_id and e.type != fmt.SESSION_JOIN
        ]
        cycles = self._cycles()
        where = str(self.path)
        for what, ids in (
            ("duplicate entry ids (the first is used)", duplicates),
            ("entries whose parent is not in the session", dangling),
            ("entries in a parent cycle", cycles),
        ):
            if ids:
                shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
                self.issues.append(ReadIssue(where, None, f"{len(ids)} {what}: {shown}"))

    def _cycles(self) -> list[str]:
        state: dict[str, int] = {}  # 1: on the current walk, 2: reaches a root or a known cycle
        cyclic: list[str] = []
        for event in self._by_id.values():
            walk = []
            current: Event | None = event
            while current is not None and current.id not in state:
                state[current.id] = 1
                walk.append(current.id)
                current = self._by_id.get(current.parent_id) if current.parent_id else None
            if current is not None and state[current.id] == 1:
                cyclic.extend(walk[walk.index(current.id) :])
            for entry_id in walk:
                state[entry_id] = 2
        return cyclic

    # --- DevDuck's API -------------------------------------------------------------------------

    @property
    def root(self) -> Event:
        return self.events[0]

    @property
    def session_id(self) -> str:
        for value in (
            self.root.data.get("session_id"),
            (self._archive_metadata or {}).get("session_id"),
            self.root.data.get("run_id"),
        ):
            if isinstance(value, str) and value:
                return value
        name = self.path.name
        for suffix in (fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
            name = name.removesuffix(suffix)
        return name

    @property
    def tier(self) -> str:
        """``trace`` or ``checkpoint`` (the tier whose messages can be resumed): ours as the file
        says; a DM-Code-Agent file is checkpoint-tier when a ``checkpoint`` entry holds its
        conversation (DM's ``--checkpoint`` file)."""
        if self.format is dm:
            return "checkpoint" if self._dm_checkpoints else "trace"
        tier = self.root.data.get("tier") or (self._archive_metadata or {}).get("tier") or "trace"
        return str(tier)

    @cached_property
    def _dm_checkpoints(self) -> int:
        return sum(1 for e in self.events if e.type == dm.CHECKPOINT and dm.conversation(e.data) is not None)

    @cached_property
    def evicted_events(self) -> int:
        """How many events DevDuck's ring of 10,000 dropped before the file was written (its
        ``metadata.json`` counts them, ``session.start`` goes first); 0 for every other file."""
        if self.format is not devduck:
            return 0
        end = self._end()
        return devduck.evicted(
            len(self.events),
            end is not None,
            self._archive_metadata or {},
            None if end is None else end.data.get("events"),
        )

    def _evicted_note(self) -> str:
        meta = self._archive_metadata or {}
        started = "" if self.root.type == devduck.START else f", {devduck.START} among them"
        return (
            f"{self.path}: DevDuck's ring of {devduck.RING:,} events dropped the first "
            f"{self.evicted_events:,} of this session{started} (metadata.json total_events "
            f"{meta.get('total_events')}, {len(self.events):,} in events.jsonl)"
        )

    @property
    def metadata(self) -> dict[str, Any]:
        if self._archive_metadata is not None:
            return self._archive_metadata
        if self.format is not native:
            meta = {
                "session_id": self.session_id,
                "format": self.format.NAME,
                "total_events": len(self.events),
            }
            start = next((e for e in self.events if e.type == "run_start"), None)
            if start is not None:
                meta.update({k: v for k, v in start.data.items() if k not in MESSAGE_ENTRY_KEYS})
            if self.format is dm:
                end = self._end()
                meta["tier"] = self.tier
                meta["status"], meta["duration_seconds"] = dm.run_end_facts(end.data) if end else ("", None)
            return meta
        root_meta = self.root.data.get("metadata")
        meta = dict(root_meta) if isinstance(root_meta, dict) else {}
        meta["tier"] = self.root.data.get("tier")
        end = self._end()
        if end is not None:
            meta["duration_seconds"] = (end.data.get("duration_ns") or 0) / 1e9
            meta["counts"] = end.data.get("counts")
        meta["total_events"] = len(self.events)
        return meta

    def _end(self) -> Event | None:
        for event in reversed(self.events):
            if event.type in self.format.END_TYPES:
                return event
        return None

    @property
    def duration(self) -> float | None:
        """Seconds from the first entry to the end of the session (or its last entry). DevDuck's
        and DM's are their own measure: ``session.stop``'s, the last ``run_end``'s
        ``duration_seconds`` (DM never reads its timestamps: ``None`` when no ``run_end`` says)."""
        if self.format is dm:
            end = self._end()
            return None if end is None else dm.run_end_facts(end.data)[1]
        if self.format is devduck:
            own = devduck.duration_s(self.events, self._archive_metadata or {})
            if own is not None:
                return own
        first = self.root.timestamp_ns
        end = self._end()
        if self.format is native and end is not None:
            return (end.timestamp_ns - first) / 1e9
        stamps = [e.timestamp_ns for e in self.events if e.timestamp_ns]
        return (max(stamps) - min(stamps)) / 1e9 if stamps else 0.0

    @property
    def complete(self) -> bool:
        """Whether the recording was stopped properly (``False`` for a killed process)."""
        return self._end() is not None

    @cached_property
    def snapshots(self) -> list[dict[str, Any]]:
        """DevDuck-shaped snapshots (:func:`otel_agent_trace.session_format.views.snapshot_view`):
        the same from a session's ``.jsonl`` and from its ``.zip``."""
        if self._archive_snapshots is not None:
            return self._archive_snapshots
        if self.format is devduck:
            return []
        if self.format is dm:
            return self._dm_snapshots()
        return fmt.build_snapshots(lambda: (e.data for e in self.events))

    def _dm_snapshots(self) -> list[dict[str, Any]]:
        """DM's ``checkpoint`` entries, numbered from 1, each with its conversation."""
        out = []
        since = 0
        for event in self.events:
            if event.type in dm.SNAPSHOT_TYPES:
                out.append(dm.snapshot(event.data, len(out) + 1, since))
                since = 0
            else:
                since += 1
        return out

    def get_snapshot(self, snapshot_id: int) -> dict[str, Any]:
        """Snapshot ``snapshot_id`` (1-based, as DevDuck numbers them)."""
        for snapshot in self.snapshots:
            if snapshot.get("snapshot_id") == snapshot_id:
                return snapshot
        known = [s.get("snapshot_id") for s in self.snapshots]
        raise KeyError(f"{self.path}: no snapshot {snapshot_id} (snapshots: {known or 'none'})")

    def _message_view(self, entry_id: str) -> dict[str, Any]:
        event = self._by_id.get(entry_id)
        return fmt.message_view(None if event is None else event.data, entry_id)

    def get_events_by_layer(self, layer: str) -> list[Event]:
        return [e for e in self.events if e.layer == layer]

    def get_events_by_type(self, event_type: str) -> list[Event]:
        return [e for e in self.events if e.type == event_type or e.event_type == event_type]

    def get_events_until_snapshot(self, snapshot_id: int) -> list[Event]:
        """The events before snapshot ``snapshot_id`` was taken."""
        ordinal = 0
        for index, event in enumerate(self.events):
            if event.type in self.format.SNAPSHOT_TYPES:
                ordinal += 1
                own = event.data.get("snapshot_id")
                if (own if isinstance(own, int) else ordinal) == snapshot_id:
                    return self.events[:index]
        raise KeyError(f"{self.path}: no snapshot {snapshot_id}")

    def get_events_in_range(self, start: Any = None, end: Any = None) -> list[Event]:
        """Events with ``start <= timestamp <= end``; each bound is ns since the epoch (int),
        seconds since the epoch (float), a ``datetime``, or ``None`` (open)."""
        low, high = _to_ns(start), _to_ns(end)
        return [
            e
            for e in self.events
            if (low is None or e.timestamp_ns >= low) and (high is None or e.timestamp_ns <= high)
        ]

    # --- the tree ------------------------------------------------------------------------------

    def entry(self, entry_id: str) -> Event:
        return self._by_id[entry_id]

    def find(self, id_or_prefix: str) -> Event:
        """The entry with this id, else the one whose id starts with it; a clear
        :class:`EntryLookupError` listing the candidates otherwise."""
        if id_or_prefix in self._by_id:
            return self._by_id[id_or_prefix]
        if not id_or_prefix:
            raise EntryLookupError(f"{self.path}: an empty id matches every entry")
        found = [i for i in self._by_id if i.startswith(id_or_prefix)]
        if len(found) == 1:
            return self._by_id[found[0]]
        if not found:
            raise EntryLookupError(f"{self.path}: no entry matches {id_or_prefix!r}")
        shown = ", ".join(found[:10]) + (f", … ({len(found)} in all)" if len(found) > 10 else "")
        raise EntryLookupError(f"{self.path}: ambiguous: {id_or_prefix!r} matches {shown}")

    def children(self, entry_id: str) -> list[Event]:
        return list(self._children.get(entry_id, ()))

    def ancestors(self, entry_id: str) -> list[Event]:
        """The entry's parent, its parent's parent, … up to the root (id or unique prefix)."""
        out: list[Event] = []
        current = self.find(entry_id)
        seen = {current.id}
        while current.parent_id and current.parent_id not in seen:
            seen.add(current.parent_id)
            parent = self._by_id.get(current.parent_id)
            if parent is None:
                break
            out.append(parent)
            current = parent
        return out

    @cached_property
    def spans(self) -> list[SpanRecord]:
        """Spans in start order; a span with a start entry and no end entry is unfinished."""
        with _no_gc():
            return self._spans()

    def _spans(self) -> list[SpanRecord]:
        if self.format is devduck:
            return _devduck_spans(self.events)
        if self.format is dm:
            return _dm_spans(self.events)
        spans: dict[str, SpanRecord] = {}
        for e in self.events:
            d = e.data
            if e.type == fmt.SPAN_START:
                spans[d["span_id"]] = SpanRecord(
                    span_id=d["span_id"],
                    trace_id=d.get("trace_id") or "",
                    name=d.get("name") or "",
                    layer=e.layer,
                    parent_span_id=d.get("parent_span_id"),
                    start_ns=e.timestamp_ns,
                    kind=d.get("kind"),
                    attributes=dict(d.get("attributes") or {}),
                    entry_id=e.id,
                    parent_entry_id=e.parent_id,
                )
            elif e.type == fmt.SPAN_END:
                rec = spans.get(d["span_id"])
                if rec is not None and rec.finished:
                    continue  # ended twice (a forked child ending a span it inherited): the first end
                if rec is None:  # a span that ended before its start was written: its end says all
                    rec = spans[d["span_id"]] = SpanRecord(
                        span_id=d["span_id"],
                        trace_id=d.get("trace_id") or "",
                        name=d.get("name") or "",
                        layer=e.layer,
                        parent_span_id=d.get("parent_span_id"),
                        start_ns=e.timestamp_ns - int(d.get("duration_ns") or 0),
                        kind=d.get("kind"),
                        entry_id=e.id,
                        parent_entry_id=e.parent_id,
                    )
                rec.end_ns = e.timestamp_ns
                status = d.get("status") or {}
                rec.status = status.get("code") or fmt.STATUS_UNSET
                rec.status_description = status.get("description")
                rec.attributes.update(d.get("attributes") or {})
                rec.content = d.get("content") or {}
            elif e.type == fmt.SPAN_EVENT:
                rec = spans.get(d["span_id"])
                if rec is not None:
                    rec.events.append(d)
        return list(spans.values())

    def conversation(self, until_entry_id: str | None = None) -> list[dict[str, Any]]:
        """The conversation as of the last model call (or the last one at or before an entry, by
        id or unique prefix): its input messages followed by its output messages."""
        until = None if until_entry_id is None else self.find(until_entry_id).id
        if self.format is not native:
            return self._foreign_conversation(until)
        last: Event | None = None
        for e in self.events:
            if e.type == fmt.SPAN_END and "input_message_ids" in (e.data.get("content") or {}):
                last = e
            if until is not None and e.id == until:
                break
        if last is None:
            return []
        content = last.data["content"]
        ids = list(content.get("input_message_ids") or []) + list(content.get("output_message_ids") or [])
        return [self._message_view(i) for i in ids]

    def _foreign_conversation(self, until: str | None) -> list[dict[str, Any]]:
        """DevDuck: the last snapshot's messages, then later ``message`` events (their previews).
        DM: the ``message`` entries since the run's latest ``run_start``."""
        out: list[dict[str, Any]] = []
        drop = {*MESSAGE_ENTRY_KEYS, "run_id", "trace_id"}
        for e in self.events:
            if self.format is devduck and e.type in devduck.SNAPSHOT_TYPES:
                snap = next(
                    (s for s in self.snapshots if s.get("snapshot_id") == e.data.get("snapshot_id")), None
                )
                if snap is not None and isinstance(snap.get("agent_messages"), list):
                    out = list(snap["agent_messages"])
            elif self.format is dm and e.type == "run_start":
                out = []
            elif e.type == fmt.MESSAGE:
                message = {k: v for k, v in e.data.items() if k not in drop}
                if "content" not in message and "content_preview" in message:
                    message["content"] = message.pop("content_preview")
                out.append(message)
            if until is not None and e.id == until:
                break
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "format": self.format.NAME,
            "complete": self.complete,
            "duration": self.duration,
            "metadata": self.metadata,
            "events": [e.data for e in self.events],
            "snapshots": self.snapshots,
        }

    def __repr__(self) -> str:
        return (
            f"LoadedSession(id={self.session_id}, events={len(self.events)}, "
            f"snapshots={len(self.snapshots)}, duration={_seconds(self.duration)})"
        )

    # --- replay and resume (in their own modules) --------------------------------------------

    def replay_events(self, callback: Callable[..., Any], start: Any = None, end: Any = None) -> Any:
        from otel_agent_trace.offline.replay import replay_events

        return replay_events(self, callback, start=start, end=end)

    def rebuild_context(self, until: str | None = None) -> Any:
        from otel_agent_trace.offline.resume import rebuild_context

        return rebuild_context(self, until=until)

    def resume_from_snapshot(self, snapshot_id: int, agent: Any = None) -> Any:
        from otel_agent_trace.offline.resume import resume_from_snapshot

        return resume_from_snapshot(self, snapshot_id, agent=agent)

    def resume_and_continue(self, snapshot_id: int, new_query: str, agent: Any) -> Any:
        from otel_agent_trace.offline.resume import resume_and_continue

        return resume_and_continue(self, snapshot_id, new_query, agent)


def _seconds(value: float | None) -> str:
    """DevDuck's ``10.0s`` from a second up; below, what was measured (``0.015s``, not ``0.0s``)."""
    if value is None:
        return "unknown"
    if value >= 1 or value == 0:
        return f"{value:.1f}s"
    shown = f"{value:.3g}"
    return (f"{value:.9f}".rstrip("0") if "e" in shown else shown) + "s"


def _to_ns(bound: Any) -> int | None:
    if bound is None:
        return None
    if isinstance(bound, datetime):
        return int(bound.timestamp() * 1e9)
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        raise TypeError(
            f"a time bound is ns (int), seconds (float) or a datetime, not {type(bound).__name__}"
        )
    return int(bound * 1e9) if isinstance(bound, float) else bound


def _devduck_spans(events: list[Event]) -> list[SpanRecord]:
    """DevDuck's ``tool.call`` / ``tool.result`` pairs (matched by tool name, in order) as spans."""
    spans: list[SpanRecord] = []
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
            spans.append(rec)
            open_calls.setdefault(name, []).append(rec)
        elif e.type == "tool.result" and open_calls.get(name):
            rec = open_calls[name].pop(0)
            rec.end_ns = max(e.timestamp_ns, rec.start_ns)
            rec.status = fmt.STATUS_UNSET
            rec.content["tool_result"] = e.data.get("result_preview")
    return spans


def _dm_spans(events: list[Event]) -> list[SpanRecord]:
    """DM's runs (``run_start`` to ``run_end``) and tool calls (one entry each, no duration)."""
    spans: list[SpanRecord] = []
    run: SpanRecord | None = None
    for e in events:
        if e.type == "run_start":
            run = SpanRecord(e.id, str(e.data.get("run_id") or ""), "run", "agent", None, e.timestamp_ns)
            run.entry_id, run.parent_entry_id = e.id, e.parent_id
            spans.append(run)
        elif e.type in ("run_end", "run_error") and run is not None:
            run.end_ns = e.timestamp_ns
            failed = e.type == "run_error" or e.data.get("status") not in (None, "success", "ok", "completed")
            run.status = fmt.STATUS_ERROR if failed else fmt.STATUS_OK
            run = None
        elif e.type == "tool_call":
            action = e.data.get("action")
            rec = SpanRecord(
                span_id=e.id,
                trace_id=str(e.data.get("run_id") or ""),
                name=f"execute_tool {action}" if isinstance(action, str) else "execute_tool",
                layer="tool",
                parent_span_id=None if run is None else run.span_id,
                start_ns=e.timestamp_ns,
                end_ns=e.timestamp_ns,
                status=fmt.STATUS_ERROR if e.data.get("failure") or e.data.get("failed") else fmt.STATUS_OK,
                content={
                    "tool_arguments": e.data.get("action_input"),
                    "tool_result": e.data.get("observation"),
                },
                entry_id=e.id,
                parent_entry_id=e.parent_id,
            )
            spans.append(rec)
    return spans


def _too_many(max_entries: int) -> str:
    return (
        f"more than {max_entries:,} entries, too many to load whole (max_entries=None, or the "
        "commands' --max-entries 0, loads it anyway; iter_entries and analyze stream any size)"
    )


def load_session(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    lenient: bool = False,
    children: bool = True,
    max_entries: int | None = MAX_ENTRIES,
) -> LoadedSession:
    """Load a session: our JSONL (with its child files) or ZIP, a directory holding one session,
    a DevDuck session ZIP or a DM-Code-Agent JSONL.

    A bad line is a :class:`SessionFormatError` naming file and line; ``lenient=True`` skips bad
    lines (counted in ``issues``); ``strict=True`` also refuses what is otherwise tolerated with
    a warning (a torn last line, duplicate ids, dangling parents, parent cycles);
    ``children=False`` reads a session's JSONL without its child processes' files. A session of
    more than ``max_entries`` entries (:data:`MAX_ENTRIES`; ``None``: no limit) is refused with a
    ``SessionFormatError`` (``too_large``) before it fills memory: stream it with :func:`iter_entries`.
    """
    return LoadedSession(path, strict=strict, lenient=lenient, children=children, max_entries=max_entries)
