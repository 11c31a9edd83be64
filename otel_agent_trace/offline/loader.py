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
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.reader import ReadIssue, Source, iter_lines, open_regular, open_source

from . import formats
from .formats import BadEntry, Format, native
from .formats.records import Event, SpanRecord
from .jsonvalue import JSONValue
from .terminal import clean

if TYPE_CHECKING:
    from .resume import Restored


class SessionReadWarning(UserWarning):
    """A session file had something the reader tolerated (a torn last line, a skipped bad line)."""


class EntryLookupError(LookupError):
    """No entry, or several, match an id or id prefix; the message lists the candidates."""


@contextmanager
def _no_gc() -> Generator[None, None, None]:
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

_CHILD_FILE = re.compile(r"\.p\d+(\.checkpoint)?\.jsonl$")


def _entries_of(
    stream: Any,
    name: str,
    issues: list[ReadIssue],
    lenient: bool,
    module: Format | None,
    source: Source | None = None,
) -> Iterator[tuple[Format, dict[str, Any]]]:
    """The entries of one file, each normalised by its format (told from its first entry unless
    given)."""
    normalizer = None if module is None else module.normalizer(source)
    for line, raw in iter_lines(stream, name, issues=issues, strict=not lenient):
        if module is None or normalizer is None:
            module = formats.detect(raw)
            normalizer = module.normalizer(source)
        try:
            entry = normalizer.normalize(raw)
        except BadEntry as exc:
            if not lenient:
                raise fmt.SessionFormatError(name, line, str(exc)) from None
            issues.append(ReadIssue(name, line, f"{exc}; skipped"))
            continue
        yield module, entry


def _stream(
    path: Path,
    issues: list[ReadIssue],
    *,
    lenient: bool,
    children: bool = True,
    on_source: Callable[[Source], None] | None = None,
) -> Iterator[tuple[Format, dict[str, Any]]]:
    """Every entry of a session, normalised: its file (or ZIP, or unpacked ZIP directory), then
    the files its format reads with it (our JSONL's child processes' files, as the ZIP orders them)."""
    root: dict[str, Any] | None = None
    module: Format | None = None
    with open_source(path) as source:
        if on_source is not None:
            on_source(source)
        for module, entry in _entries_of(source.stream, source.name, issues, lenient, None, source):
            root = root or entry
            yield module, entry
        in_archive = source.archive is not None
    if not children or in_archive or module is None or root is None:
        return
    for child in module.child_files(path, root, issues):
        with open_regular(child) as stream:
            yield from _entries_of(stream, str(child), issues, lenient, module)


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


def session_format_of(path: str | os.PathLike[str]) -> Format:
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
        self._snapshots: list[dict[str, Any]] | None = None
        self._tier: str | None = None
        self.format: Format = native
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
                    if type(value) is str:
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
            warnings.warn(clean(self.format.evicted_note(self)), SessionReadWarning, stacklevel=3)
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
        meta: JSONValue = source.archive.read_json(fmt.ZIP_METADATA)
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
        snapshots_format = meta.get("snapshots_format") if isinstance(meta, dict) else None
        if isinstance(snapshots_format, int) and snapshots_format >= 2:
            return  # its snapshots name their messages by id: built from events.jsonl, as from a .jsonl
        try:
            snaps: JSONValue = source.archive.read_json(fmt.ZIP_SNAPSHOTS)
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
            self._archive_snapshots = cast("list[dict[str, Any]]", snaps)

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
            walk: list[str] = []
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
        """As the file (or its archive's metadata) says, else the file's name."""
        own = self.format.session_id(self.root.data, self._archive_metadata)
        if own:
            return own
        name = self.path.name
        for suffix in (fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
            name = name.removesuffix(suffix)
        return name

    @property
    def tier(self) -> str:
        """``trace`` or ``checkpoint`` (the tier whose messages can be resumed): ours as the file
        says; a DM-Code-Agent file is checkpoint-tier when a ``checkpoint`` entry holds its
        conversation (DM's ``--checkpoint`` file)."""
        if self._tier is None:
            self._tier = self.format.tier(self)
        return self._tier

    @cached_property
    def evicted_events(self) -> int:
        """How many events DevDuck's ring of 10,000 dropped before the file was written (its
        ``metadata.json`` counts them, ``session.start`` goes first); 0 for every other file."""
        return self.format.evicted(self)

    @property
    def archive_metadata(self) -> dict[str, Any] | None:
        """The session ZIP's ``metadata.json``, when it was read from one that has it."""
        return self._archive_metadata

    @property
    def metadata(self) -> dict[str, Any]:
        if self._archive_metadata is not None:
            return self._archive_metadata
        return self.format.metadata(self)

    @property
    def end_event(self) -> Event | None:
        """The last entry that says the recording was stopped (``None`` for a killed process)."""
        for event in reversed(self.events):
            if event.type in self.format.END_TYPES:
                return event
        return None

    @property
    def duration(self) -> float | None:
        """Seconds from the first entry to the end of the session (or its last entry). DevDuck's
        and DM's are their own measure: ``session.stop``'s, the last ``run_end``'s
        ``duration_seconds`` (DM never reads its timestamps: ``None`` when no ``run_end`` says)."""
        return self.format.duration(self)

    @property
    def complete(self) -> bool:
        """Whether the recording was stopped properly (``False`` for a killed process)."""
        return self.end_event is not None

    @property
    def snapshots(self) -> list[dict[str, Any]]:
        """DevDuck-shaped snapshots (:func:`otel_agent_trace.session_format.views.snapshot_view`):
        the same from a session's ``.jsonl`` and from its ``.zip``."""
        if self._snapshots is None:
            own = self._archive_snapshots
            self._snapshots = own if own is not None else self.format.snapshots(self.events)
        return self._snapshots

    def get_snapshot(self, snapshot_id: int) -> dict[str, Any]:
        """Snapshot ``snapshot_id`` (1-based, as DevDuck numbers them)."""
        for snapshot in self.snapshots:
            if snapshot.get("snapshot_id") == snapshot_id:
                return snapshot
        known = [s.get("snapshot_id") for s in self.snapshots]
        raise KeyError(f"{self.path}: no snapshot {snapshot_id} (snapshots: {known or 'none'})")

    def _message_view(self, entry_id: str) -> dict[str, Any]:
        return native.message_view(self, entry_id)

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
        return self.format.spans(self.events)

    def conversation(self, until_entry_id: str | None = None) -> list[dict[str, Any]]:
        """The conversation as of the last model call (or the last one at or before an entry, by
        id or unique prefix): its input messages followed by its output messages. DevDuck's: the
        last snapshot's messages, then later ``message`` events (their previews); DM's: the
        ``message`` entries since the run's latest ``run_start``."""
        until = None if until_entry_id is None else self.find(until_entry_id).id
        return self.format.conversation(self, until)

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

    def rebuild_context(self, until: str | None = None) -> list[dict[str, Any]]:
        from otel_agent_trace.offline.resume import rebuild_context

        return rebuild_context(self, until=until)

    def resume_from_snapshot(self, snapshot_id: int, agent: Any = None) -> Restored:
        from otel_agent_trace.offline.resume import resume_from_snapshot

        return resume_from_snapshot(self, snapshot_id, agent=agent)

    def resume_and_continue(self, snapshot_id: int, new_query: str, agent: Any) -> Restored:
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
