"""A recording session: its files (one per tier), the span tree, messages, snapshots, the ZIP."""

from __future__ import annotations

import operator
import os
import queue
import threading
import time
from itertools import chain, compress, repeat
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import internal_error, never_raise, own_io, report_once
from otel_agent_trace._internal.own_messages import OwnMessages
from otel_agent_trace._internal.realign import dropped_at
from otel_agent_trace.session_format.references import reference as _reference
from otel_agent_trace.session_format.views import common_prefix
from otel_agent_trace.settings import TIER_CHECKPOINT, Settings, get_settings

from .entries import dropped_counts as _dropped
from .entries import end_entry as _end_entry
from .entries import layer_of
from .entries import status_fields as _status_fields
from .environment import LIVE, Environment
from .tiers import CHECKPOINT_ONLY_KEYS, MESSAGE_KEYS, TierPolicy, prepare_directory, tier_file
from .writer import SessionFileExists, TierWriter

_MAX_PENDING_CONTENT = 10_000
# Queued starts and events beyond this are written at once: memory stays bounded, and a batch of
# this size is cheaper per entry than a bigger one (its objects stay in the CPU's caches).
_MAX_QUEUED = 256


_attributes_of = sdk_compat.span_attributes
# Span attributes whose value is the session's id on every span: said once, in the root entry
# (``span_attributes``), and left out of each span's entries.
_SESSION_KEYS = _OURS, _SHARED = (semconv.AGENT_TRACE_SESSION_ID, semconv.SESSION_ID)


# What a span's start computed, reused at its end: layer, ids as hex, the name and attributes it
# saw, and per tier the name and attributes shown (valid while name and attributes are unchanged).
# A tuple: one per span in flight, built on the hot path.
_LiveSpan = tuple  # (layer, trace_hex, span_hex, name, attrs, [(shown_name, shown_attrs), ...])


class _QueuedEvent:
    """A span event waiting in the queue with the span starts (``context`` is ``None``: never
    taken for a span whose end is being written)."""

    __slots__ = ("span", "name", "ts", "attributes", "layer")
    context = None

    def __init__(self, span: Any, name: str, ts: int, attributes: Any, layer: str):
        self.span = span
        self.name = name
        self.ts = ts
        self.attributes = attributes
        self.layer = layer


class _Tier:
    """A writer plus the policy of what its tier keeps (``show``: a span's name and attributes as
    the tier keeps them, the policy's bound method, looked up once)."""

    __slots__ = (
        "writer",
        "policy",
        "show",
        "snapshot",
        "content",
        "known",
        "recent",
        "snapshot_raw",
        "content_raw",
        "span_messages",
        "prefix",
    )

    def __init__(self, writer: TierWriter, policy: TierPolicy):
        self.writer = writer
        self.policy = policy
        self.show = policy.span
        # The file's latest snapshot: (entry id, message ids, carried fields), for the next
        # snapshot and message-id lists written by reference to it.
        self.snapshot: tuple[str, list[Any], dict[str, Any]] | None = None
        # The latest value of each carried content key in the file (fmt.CONTENT_CARRIED), as
        # written (see _frozen).
        self.content: dict[str, Any] = {}
        # Message key (see _message_keys) → its message entry in this file: a message sent again
        # costs a dict lookup. Cleared with the recorder's digests (SessionRecorder._forget).
        self.known: dict[tuple[Any, ...], str] = {}
        # The conversation this file saw last (SessionRecorder._message_ids): a plain copy of each
        # message (_UNEQUAL for one that is not plain) and its entry id.
        self.recent: tuple[list[Any], list[str | None]] = ([], [])
        # What the fields of the latest snapshot, and the carried content keys, were before this
        # tier showed them (see _frozen): one that is as it was is not shown (redacted, hashed) again.
        self.snapshot_raw: dict[str, Any] = {}
        self.content_raw: dict[str, Any] = {}
        # The latest automatic snapshot's messages as its model call's span content holds them
        # (SessionRecorder.snapshot's ``span_messages``): (span id, input list, its length, output
        # list, its length, the snapshot's message ids). The span's end takes its ids from there.
        self.span_messages: tuple[int, list[Any], int, list[Any], int, list[Any]] | None = None
        # The ids list of ``recent`` the latest _message_ids compared with, and how many of its
        # leading ids the messages took (so a list of ids built then starts with those).
        self.prefix: tuple[list[Any], int] = ([], 0)


def _drain(wake: queue.SimpleQueue[None]) -> None:
    """Forget the wake-ups already sent (the flusher is awake)."""
    try:
        while True:
            wake.get_nowait()
    except queue.Empty:
        pass


class SessionRecorder:
    """Records one session into one JSONL file per tier, as things happen; exports ZIPs at stop."""

    # Content keys written to the checkpoint tier only (capture code asks before handing them over).
    CHECKPOINT_ONLY_CONTENT = CHECKPOINT_ONLY_KEYS

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        session_id: str | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        environment: Environment | None = None,
    ):
        self.settings = settings or get_settings()
        self.env = env = environment or LIVE
        self._clock = env.clock
        inherited = self.settings.inherited_session_id
        self.is_child = session_id is None and inherited is not None
        self._generated_id = not (session_id or inherited)
        self.session_id = session_id or inherited or self.env.session_id()
        self.name = name
        self.user_metadata = dict(metadata or {})
        self.directory = Path(self.settings.directory).expanduser()
        self.child_tag = f"p{env.pid()}" if self.is_child else None
        self.started_ns = 0
        self.stopped_ns = 0
        self.tiers: list[_Tier] = []
        self.zip_paths: list[str] = []
        self.counts = {"spans": 0, "events": 0, "messages": 0, "snapshots": 0, "sys_events_dropped": 0}
        self._content: dict[int, dict[str, Any]] = {}
        self._written_events: dict[int, set[tuple[str, int]]] = {}
        self._sys_counts: dict[int, int] = {}
        self._live: dict[int, _LiveSpan] = {}
        self._trace_hex: dict[int, str] = {}  # trace id → hex, for the spans of traces in flight
        self._last_snapshot_entries = 0
        # Message key → digest (see _message_keys), and the characters those keys hold (bounded).
        self._digests: dict[tuple[Any, ...], str] = {}
        self._digest_chars = 0
        self._system_digest: tuple[str, str] | None = None  # (system prompt, its digest)
        self._lock = threading.RLock()
        self._started = False
        self._stopped = False
        self._fork_pending = False
        self._init_queue()

    def _init_queue(self) -> None:
        self._window = max(0, self.settings.flush_ms) / 1000  # seconds; 0: starts at once
        self._pending: list[Any] = []  # spans whose start is not written yet, and span events
        self._flusher: threading.Thread | None = None
        self._flusher_idle = True
        # The flusher's wake-up: a SimpleQueue, whose put is one C call. (A threading.Event's set
        # holds a Python-level lock: a SIGTERM handler stopping the session while the main thread
        # was inside set() deadlocked on it until the watchdog killed the process.)
        self._wake: queue.SimpleQueue[None] = queue.SimpleQueue()

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> SessionRecorder:
        # own_io: what starting does (reading package metadata, opening files) is not the agent's
        # activity; it matters in a forked child, where this recorder is already the active one.
        with self._lock, own_io():
            if self._started:
                return self
            self._started = True
            self.started_ns = self._clock()
            from otel_agent_trace.redaction import get_redactor  # compiled on first use, not at start-up

            redactor = get_redactor()
            self.env.host()  # slow the first time: learn it before the files exist, not between
            if self.is_child:  # the same pid may have recorded before an exec (fork, then exec)
                self.child_tag = _free_child_tag(
                    self.directory, self.session_id, self.child_tag, self.settings
                )
            for attempt in range(5):
                try:
                    self._open_writers(redactor)
                    break
                except SessionFileExists:
                    self._close_writers(remove=True)
                    if not self._generated_id or attempt == 4:
                        raise
                    self.session_id = self.env.session_id()  # another session took that id
            sink.set_active(self)
        return self

    def _open_writers(self, redactor: Any) -> None:
        prefix_salt = self.child_tag or ""
        for tier in self.settings.tiers:
            default = self.directory / fmt.session_file_name(self.session_id, tier, self.child_tag)
            path = tier_file(self.settings, tier, default, child=self.is_child)
            with own_io():
                prepare_directory(path.parent, tier == TIER_CHECKPOINT)
            prefix = fmt.entry_prefix(self.session_id, prefix_salt + ("" if tier == "trace" else "/" + tier))
            policy = TierPolicy(tier, self.settings, redactor)
            writer = TierWriter(
                path,
                tier,
                prefix,
                fsync=self.settings.fsync,
                private=tier == TIER_CHECKPOINT,
                root=self._root_fields(tier, policy),
                root_parent=dict(self.settings.inherited_parent_entries).get(tier, "")
                if self.is_child
                else "",
                lock=self._lock,
            )
            self.tiers.append(_Tier(writer, policy))

    def _close_writers(self, *, remove: bool) -> None:
        """Close the files opened so far (removing them: ours, holding nothing but their root)."""
        for tier in self.tiers:
            tier.writer.close()
            if remove:
                with own_io():
                    try:
                        tier.writer.path.unlink()
                    except OSError:
                        pass
        self.tiers = []

    def _root_fields(self, tier: str, policy: TierPolicy) -> dict[str, Any]:
        """The root entry (``session.start``; ``session.join`` in a child process) of one file."""
        env = self.env
        host = env.host()
        meta = {
            "session_id": self.session_id,
            "name": self.name,
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z", env.localtime(self.started_ns / 1e9)),
            "hostname": host["hostname"],
            "platform": host["platform"],
            "python_version": host["python_version"],
            "pid": env.pid(),
            "argv": env.argv(),
            "cwd": env.cwd(),
            "packages": host["packages"],
        }
        if self.user_metadata:
            meta["user"] = self.user_metadata
        if self.settings.replay_of:  # a model replay's run: the session it was answered from
            meta["replay_of"] = self.settings.replay_of
        kind = fmt.SESSION_START
        if self.is_child:
            kind = fmt.SESSION_JOIN
            meta["parent_span_id"] = self.settings.inherited_parent_span
            meta["ppid"] = env.ppid()
        return {
            "type": kind,
            "layer": fmt.LAYER_AGENT,
            "ts": self.started_ns,
            "session_id": self.session_id,
            "tier": tier,
            "metadata": policy.value(meta),
            "span_attributes": dict.fromkeys(_SESSION_KEYS, self.session_id),
        }

    def stop(self) -> list[str]:
        """End the session: write ``session.end``, close the files and export the ZIPs."""
        with self._lock:
            if not self._started or self._stopped:
                return list(self.zip_paths)
            self._flush_queue()  # spans still running are in the file, marked unfinished
            self._stopped = True
            self._wake.put(None)  # the flusher thread ends
            self.stopped_ns = self._clock()
            if sink.active() is self:
                sink.set_active(None)
            for tier in self.tiers:
                open_spans = tier.writer.open_spans()
                tier.writer.write(
                    tier.writer.root_id,
                    {
                        "type": fmt.SESSION_END,
                        "layer": fmt.LAYER_AGENT,
                        "ts": self.stopped_ns,
                        "duration_ns": self.stopped_ns - self.started_ns,
                        "counts": dict(self.counts, entries=tier.writer.entries + 1),
                        "unfinished_spans": len(open_spans),
                    },
                )
                tier.writer.close()
            if self.settings.write_zip and not self.is_child:
                from .archive import export_zip

                for tier in self.tiers:
                    path = never_raise("zip export")(_export_or_say)(export_zip, self, tier.writer)
                    if path:
                        self.zip_paths.append(str(path))
            return list(self.zip_paths)

    def _continue_in_forked_child(self) -> None:
        """After ``fork()`` without ``exec`` (multiprocessing workers, …): the child must not write
        the parent's file (the same ids would be counted twice), so it records into a child file of
        the same session, joined under the span that was current at the fork."""
        from opentelemetry import trace

        current = trace.get_current_span().get_span_context()
        parent_hex = f"{current.span_id:016x}" if current.is_valid else None
        # Not parent_entries(): writing the queue here would write the parent's entries from the
        # child. The parent wrote it just before the fork (lifecycle._before_fork).
        sid = current.span_id if current.is_valid else None
        entries = {t.writer.tier: (sid and t.writer.span_entry(sid)) or t.writer.root_id for t in self.tiers}
        for tier in self.tiers:
            tier.writer.abandon()
        self._lock = threading.RLock()  # a thread of the parent may have held it: not here
        self.settings = self.settings.with_(
            inherited_session_id=self.session_id,
            inherited_parent_span=parent_hex,
            inherited_parent_entries=tuple(entries.items()),
        )
        self.is_child = True
        self.child_tag = f"p{self.env.pid()}"
        self.tiers = []
        self.zip_paths = []
        self.counts = dict.fromkeys(self.counts, 0)
        for pending in (self._content, self._written_events, self._sys_counts, self._live):
            pending.clear()
        self._init_queue()  # the parent's queued starts are the parent's to write
        self._started = False
        self._fork_pending = True  # files are opened on the first entry: a fork that execs at once
        # (pty.fork, subprocess with preexec_fn) leaves no empty child file behind

    def _open_fork_files(self) -> None:
        with self._lock:
            if self._fork_pending:
                self._fork_pending = False
                self.start()

    @property
    def active(self) -> bool:
        return self._started and not self._stopped

    @property
    def files(self) -> list[Path]:
        return [t.writer.path for t in self.tiers]

    # --- spans ---------------------------------------------------------------------------------
    #
    # A span's start is queued (the span itself, nothing serialized) and written, in order, by the
    # flusher thread within ``flush_ms`` or sooner by whatever is written next: any entry
    # under a queued span or another span's end. A span that ends while its start is still the
    # last one queued (most spans: short, no children) gets one ``span.end`` entry that says it
    # all (one serialization, one system call). So a killed process loses no finished span, and a
    # span still running is in the file once it is older than the window (sooner if anything
    # happens under it). ``flush_ms=0`` writes every start at once.

    def on_span_start(self, span: Any) -> None:
        if self._stopped:
            return
        if self._fork_pending:
            self._open_fork_files()
        self.counts["spans"] += 1
        if self._window:
            pending = self._pending
            pending.append(span)  # atomic; the lock is only taken to write
            if len(pending) >= _MAX_QUEUED:
                with self._lock:
                    self._flush_queue()
            elif self._flusher_idle:
                self._wake_flusher()
        else:
            with self._lock:
                self._pending.append(span)
                self._flush_queue()

    def _take_queue(self, without: Any = None) -> list[Any]:
        """What is queued, removed from the queue (caller holds the lock; what other threads queue
        meanwhile stays queued, in order). ``without``: a span context whose start, if it is the
        last thing queued, is dropped: that span's end entry will say it all."""
        pending = self._pending
        if not pending:
            return []
        items = pending[:]
        del pending[: len(items)]
        if without is not None and items[-1].context is without:
            items.pop()
        return items

    def _parent_of(self, span: Any) -> tuple[int | None, str | None]:
        """A span's parent span id and its hex (from the parent's memo when it is in flight)."""
        parent = span.parent
        if parent is None:
            return None, None
        parent_sid = parent.span_id
        in_flight = self._live.get(parent_sid)
        return parent_sid, in_flight[2] if in_flight is not None else f"{parent_sid:016x}"

    def _said_once(self, attrs: dict[str, Any]) -> None:
        """Leave out of a span's attributes (a copy) what the root entry's ``span_attributes``
        says (the session's id); a key the span does not have is written ``null``."""
        sid = self.session_id
        if attrs.get(_OURS) is sid and attrs.get(_SHARED) is sid:  # the common case: both tags
            del attrs[_OURS], attrs[_SHARED]
            return
        for key in _SESSION_KEYS:
            tagged = attrs.pop(key, None)
            if tagged is not sid and tagged != sid:
                attrs[key] = tagged

    def _trace_hex_of(self, trace_id: int) -> str:
        """A trace id as hex, remembered for the spans of traces in flight (bounded)."""
        found = self._trace_hex.get(trace_id)
        if found is None:
            if len(self._trace_hex) >= 1024:
                self._trace_hex.clear()
            found = self._trace_hex[trace_id] = f"{trace_id:032x}"
        return found

    def _flush_queue(self, starts: list[Any] | None = None) -> None:
        """Write queued starts and events (``starts``, or the whole queue) in one system call per
        file. The caller holds the lock."""
        if starts is None:
            starts = self._take_queue()
            if not starts:
                return
        per_tier: list[list[Any]] = [[] for _ in self.tiers]
        self._queued_items(starts, per_tier)
        for tier, items in zip(self.tiers, per_tier, strict=True):
            if items:
                tier.writer.write_spans(items)

    def _queued_items(self, queued: list[Any], per_tier: list[list[Any]]) -> None:
        """The entries of queued span starts and events, in order, per tier."""
        for item in queued:
            if type(item) is _QueuedEvent:
                self._event_items(item, per_tier)
            else:
                self._start_items(item, per_tier)

    def _event_items(self, event: _QueuedEvent, per_tier: list[list[Any]]) -> None:
        ctx = event.span.get_span_context()
        sid = ctx.span_id
        memo = self._live.get(sid)
        if memo is not None:
            trace_hex, span_hex = memo[1], memo[2]
        else:
            trace_hex, span_hex = f"{ctx.trace_id:032x}", f"{sid:016x}"
        for tier, items in zip(self.tiers, per_tier, strict=True):
            fields = self._event_fields(
                tier, trace_hex, span_hex, event.layer, event.name, event.ts, event.attributes
            )
            items.append(({"id": "", "parent_id": None, **fields}, sid, False, None))

    def _start_items(self, span: Any, per_tier: list[list[Any]]) -> None:
        """A span's ``span.start`` entry per tier (appended to ``per_tier``), remembered for its end.
        Its start time, with the name and attributes it has now (a start written late, by the
        flusher or because something was written under it, may know more than the span did when
        it started)."""
        name = span.name
        attrs = _attributes_of(span)
        self._said_once(attrs)
        ctx = span.context
        sid = ctx.span_id
        parent_sid, parent_hex = self._parent_of(span)
        trace_hex = self._trace_hex_of(ctx.trace_id)
        span_hex = f"{sid:016x}"
        layer = layer_of(attrs)
        kind = span.kind._name_
        ts = span.start_time
        shown = []
        for index, tier in enumerate(self.tiers):
            shown_name, shown_attrs = view = tier.show(name, attrs)
            shown.append(view)
            entry = {
                "id": "",
                "parent_id": None,
                "type": fmt.SPAN_START,
                "layer": layer,
                "ts": ts,
                "name": shown_name,
                "kind": kind,
                "trace_id": trace_hex,
                "span_id": span_hex,
            }
            if parent_hex is not None:  # (a trace root's null is left out)
                entry["parent_span_id"] = parent_hex
            if shown_attrs:
                entry["attributes"] = shown_attrs
            per_tier[index].append((entry, sid, None, parent_sid))
        self._live[sid] = (layer, trace_hex, span_hex, name, attrs, shown)

    def on_span_end(self, span: Any) -> None:
        if self._stopped:
            return
        if self._fork_pending:
            self._open_fork_files()
        ctx = span.context
        sid = ctx.span_id
        pending = self._pending
        if (
            not pending
            or pending[-1].context is not ctx
            or getattr(span, "_events", True)
            or sid in self._content
            or sid in self._sys_counts
        ):
            self._end_span(span, ctx, sid)
            return
        # The hot path: a span that ends with nothing written under it and its start still queued
        # last (most spans: a tool or model call with no children). Its ``span.end`` entry alone
        # records it, under its parent span's entry.
        attrs = _attributes_of(span)
        self._said_once(attrs)
        name = span.name
        parent_sid, parent_hex = self._parent_of(span)
        status_fields = _status_fields(span.status)
        end = span.end_time
        layer = layer_of(attrs)
        kind = span.kind._name_
        # Known if another span of its trace was written; not remembered for one that ends here.
        trace_hex = self._trace_hex.get(ctx.trace_id) or f"{ctx.trace_id:032x}"
        span_hex = f"{sid:016x}"
        duration = (end or 0) - (span.start_time or 0)
        dropped = _dropped(span)
        with self._lock:
            starts = self._take_queue(without=ctx)
            if starts:  # queued by other threads meanwhile, or spans still running around this one
                self._flush_queue(starts)
                self._live.pop(sid, None)  # (this span among them, if another thread queued after it)
            for tier in self.tiers:
                entry = _end_entry(
                    tier, tier.show(name, attrs), layer, end, kind, trace_hex, span_hex, parent_hex,
                    duration, status_fields, dropped,
                )  # fmt: skip
                tier.writer.write_end(entry, sid, parent_sid)

    def _end_span(self, span: Any, ctx: Any, sid: int) -> None:
        """A span's end in general: its start may be written, it may have events and content."""
        # Most spans have no content, events written early or system events: skip those lookups.
        content = self._content.pop(sid, None) if self._content else None
        written = self._written_events.pop(sid, None) if self._written_events else None
        if self._sys_counts:
            self._sys_counts.pop(sid, None)
        attrs = _attributes_of(span)
        self._said_once(attrs)
        name = span.name
        parent_sid, parent_hex = self._parent_of(span)
        # The SDK copies its event list on each access; skip that when there are none.
        events = span.events if getattr(span, "_events", True) else ()
        if written and events:
            events = [e for e in events if (e.name, e.timestamp) not in written]
        status_fields = _status_fields(span.status)
        dropped = _dropped(span)
        end = span.end_time
        duration = (end or 0) - (span.start_time or 0)
        tiers = self.tiers
        with self._lock:
            per_tier: list[list[Any]] = [[] for _ in tiers]
            # Its own start is needed only when its events hang under it: its content goes in its
            # end entry, and messages it brings hang where that end does (naming the span).
            started = sid in self._live
            self._queued_items(self._take_queue(without=None if events else ctx), per_tier)
            memo = self._live.pop(sid, None)
            if memo is not None and not started:  # its start goes with its end: the end says it all
                for items in per_tier:
                    for item in items:
                        if item[1] == sid and item[2] is None:
                            item[0].pop("attributes", None)
            if memo is not None:
                layer, trace_hex, span_hex, start_name, start_attrs, shown = memo
                unchanged = name == start_name and attrs == start_attrs  # reuse what start redacted
            else:  # its start was not written (a short span), or it started before this session
                trace_hex = self._trace_hex_of(ctx.trace_id)
                layer, span_hex = layer_of(attrs), f"{sid:016x}"
                unchanged, shown = False, []
            kind = span.kind._name_
            for index, tier in enumerate(tiers):
                items = per_tier[index]
                for event in events:
                    fields = self._event_fields(
                        tier, trace_hex, span_hex, layer, event.name, event.timestamp, event.attributes
                    )
                    items.append(({"id": "", "parent_id": None, **fields}, sid, False, parent_sid))
                entry = _end_entry(
                    tier, shown[index] if unchanged else tier.show(name, attrs), layer, end, kind,
                    trace_hex, span_hex, parent_hex, duration, status_fields, dropped,
                )  # fmt: skip
                w = tier.writer
                if content:  # its messages go first, under its start entry (else where its end goes)
                    if items:
                        w.write_spans(items)
                        items = []
                    start_id = w.span_entry(sid) or w.span_entry(parent_sid) or w.root_id
                    fields = self._content_fields(tier, start_id, trace_hex, span_hex, content)
                    if fields:  # (none when all it had is checkpoint-only and this tier is not)
                        entry["content"] = fields
                items.append((entry, sid, True, parent_sid))
                w.write_spans(items)

    def _event_fields(
        self, tier: _Tier, trace_hex: str, span_hex: str, layer: str, name: str, ts: int, attributes: Any
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "type": fmt.SPAN_EVENT,
            "layer": fmt.LAYER_SYS if name.startswith(("file.", "process.", "http.", "network.")) else layer,
            "ts": ts,
            "name": tier.policy.text(name),
            "trace_id": trace_hex,
            "span_id": span_hex,
        }
        if attributes:
            fields["attributes"] = tier.policy.attributes(dict(attributes), name)
        if tier is self.tiers[0]:  # counted once, however many tiers are written
            self.counts["events"] += 1
        return fields

    def parent_entries(self, span_id: int | None) -> dict[str, str]:
        """Per tier, the entry a child process started now under span ``span_id`` continues from
        (the span's start, written now if queued; else the root), so the session stays one tree."""
        if self._stopped:
            return {}
        with self._lock:
            return {t.writer.tier: self._span_entry(t.writer, span_id) for t in self.tiers}

    def _span_entry(self, writer: TierWriter, span_id: int | None) -> str:
        """The entry a new entry about span ``span_id`` hangs under: the span's start (written
        now if it is still queued), else the root."""
        if span_id is None:
            return writer.root_id
        found = writer.span_entry(span_id)
        if found is None and (self._window or self._pending):
            with self._lock:  # its start may be queued, or being written by another thread
                self._flush_queue()
            found = writer.span_entry(span_id)
        return found or writer.root_id

    # --- the flusher thread --------------------------------------------------------------------

    def _wake_flusher(self) -> None:
        """A start was queued while the flusher slept (or before it existed)."""
        self._flusher_idle = False
        if self._flusher is None:
            with own_io():
                self._flusher = threading.Thread(
                    target=self._flush_loop, name="otel-agent-trace-flush", daemon=True
                )
                self._flusher.start()
        else:
            self._wake.put(None)

    def _flush_loop(self) -> None:
        """Writes queued starts within the window; sleeps without wake-ups while none are queued."""
        wake = self._wake
        try:
            while not self._stopped:
                while not self._stopped:
                    if self._window:
                        try:  # a sleep that stop() cuts short
                            wake.get(timeout=self._window)
                        except queue.Empty:
                            pass
                    _drain(wake)
                    if self._stopped:
                        return
                    self._flusher_idle = True  # before looking: a start queued after the look wakes us
                    if not self._pending:
                        break
                    self._flusher_idle = False
                    with self._lock:
                        if not self._stopped:
                            self._flush_queue()
                wake.get()
                _drain(wake)
        except Exception as exc:  # pragma: no cover - never let the thread die noisily
            self._window = 0.0  # write starts at once from now on
            internal_error("the flusher thread", exc)

    # --- capture-facing API (see otel_agent_trace._internal.sink) --------------------------

    def attach_content(self, span: Any, content: dict[str, Any]) -> None:
        """Full-fidelity content of a span (messages, tool arguments/results), kept off the span
        itself so it never reaches OTLP; written with the span's end, per tier."""
        sid = span.get_span_context().span_id
        with self._lock:
            current = self._content.get(sid)
            if current is None:
                if len(self._content) >= _MAX_PENDING_CONTENT:
                    report_once("content-cap", "otel-agent-trace: too many unfinished spans with content")
                    return
                self._content[sid] = dict(content)
            else:
                current.update(content)

    def record_event(
        self, span: Any, name: str, attributes: dict[str, Any] | None = None, *, sys_layer: bool = False
    ) -> bool:
        """Add a span event and record it in the session (within ``flush_ms``, like a
        span start: see "When an entry reaches the file" in docs/session-format.md).

        With ``sys_layer`` the per-span cap on system events applies: beyond it the event is
        dropped and counted on the span (``agent_trace.sys_events.dropped``).
        Returns whether the event was recorded.
        """
        if self._stopped or span is None or not span.is_recording():
            return False
        if self._fork_pending:
            self._open_fork_files()
        ctx = span.get_span_context()
        sid = ctx.span_id
        if sys_layer:
            n = self._sys_counts.get(sid, 0) + 1
            self._sys_counts[sid] = n
            cap = self.settings.sys_events_per_span
            if n > cap:
                self.counts["sys_events_dropped"] += 1
                span.set_attribute(semconv.SYS_EVENTS_DROPPED, n - cap)
                return False
        ts = self._clock()
        # A span keeps at most SpanLimits.max_events (128) events, evicting the oldest: past that,
        # system events go to the session file only (adding them to the span costs ~5 µs each).
        if not sys_layer or n <= sdk_compat.span_event_limit(span):
            span.add_event(name, attributes or {}, timestamp=ts)
            self._written_events.setdefault(sid, set()).add((name, ts))
        layer = fmt.LAYER_SYS if sys_layer else layer_of(getattr(span, "attributes", None))
        # Queued with the span starts (in order, after its span's start), written within the
        # window or with whatever is written next: one system call for many events.
        pending = self._pending
        pending.append(_QueuedEvent(span, name, ts, dict(attributes) if attributes else None, layer))
        if not self._window or len(pending) >= _MAX_QUEUED:
            with self._lock:
                self._flush_queue()
        elif self._flusher_idle:
            self._wake_flusher()
        return True

    def flush(self) -> None:
        """Write what is queued (span starts, span events) now."""
        if self._pending:
            with self._lock:
                if not self._stopped:
                    self._flush_queue()

    def _flush_before(self, span: Any) -> bool:
        """Write what is queued but ``span``'s start when that is the last thing queued (it stays
        queued: a span that ends next needs none). Returns whether it was kept."""
        if not self._pending:
            return False
        with self._lock:
            if self._stopped:
                return False
            ctx = span.get_span_context()
            items = self._take_queue()
            kept = bool(items) and items[-1].context is ctx
            if kept:
                start = items.pop()
            if items:
                self._flush_queue(items)
            if kept:
                self._pending.insert(0, start)  # queued after it meanwhile: after it still
            return kept

    def record_message(self, role: str, content: Any, span: Any = None, **extra: Any) -> str | None:
        """Write one conversation message (once; repeats are found by hash). Returns its id in
        the first file."""
        if self._fork_pending:
            self._open_fork_files()
        self.flush()  # what is queued happened before this message: it goes first
        message = {"role": role, "content": content, **extra}
        sid = span.get_span_context().span_id if span is not None else None
        key = _message_keys([message])[0]
        with self._lock:
            ids = [
                self._message_entry(t, message, self._span_entry(t.writer, sid), sid, key) for t in self.tiers
            ]
        return ids[0] if ids else None

    def _message_ids(
        self, tier: _Tier, messages: list[Any], parent_id: str, span_id: int | None, *, remember: bool
    ) -> list[str | None]:
        """The message entries of ``messages`` in one file, written for those it does not hold
        yet. The caller holds the lock. Each message is compared with the one at its position in
        the conversation this file saw last (``tier.recent``; see :func:`_same_positions`): the
        leading ones at once, the others by identity when the capture hands its own copies (an
        ``OwnMessages``, kept as they are), else by equality with a plain copy, all in C. One
        found as it was takes its id: a resent conversation costs about one pass in C and nothing
        is hashed, so a call's cost does not grow with the conversation, whatever its messages
        hold. The others are looked up by key (see :meth:`_digest_of`).
        ``remember``: this is the conversation to compare the next one with."""
        copies, known_ids = tier.recent
        own = type(messages) is OwnMessages
        count = len(messages)
        prefix, same = _same_positions(messages, copies, own)
        if len(same) > 1 and not same[1]:
            # Two in a row differ: were some dropped (a sliding window), or replaced by one (a
            # summary of them)? Then the rest line up again without them.
            for at in (prefix, prefix + 1):
                try:
                    dropped = dropped_at(messages, copies, at, identity=own)
                except Exception:  # an odd object's comparison (not a message of ours)
                    dropped = 0
                if dropped:
                    stop = at + dropped
                    copies, known_ids = copies[:at] + copies[stop:], known_ids[:at] + known_ids[stop:]
                    prefix, same = _same_positions(messages, copies, own)
                    break
        length = prefix + len(same)
        tier.prefix = (known_ids, prefix)
        if prefix == count:
            ids = known_ids[:count]
            if remember:
                tier.recent = (copies[:count], ids)
            return ids
        todo = list(compress(range(prefix, length), map(operator.not_, same)))
        todo += range(length, count)
        ids = known_ids[:length]
        ids += [None] * (count - length)
        if remember:
            copies = copies[:length]
            copies += [_UNEQUAL] * (count - length)
        rest = list(map(messages.__getitem__, todo))
        keys = _message_keys(rest)
        found = _lookup(tier.known, keys)
        for index, message, key, entry in zip(todo, rest, keys, found, strict=True):
            if entry is None:
                entry = self._message_entry(tier, message, parent_id, span_id, key)
            ids[index] = entry
            if remember:
                copies[index] = _UNEQUAL if entry is None else message if own else _plain_copy(message)
        if remember:
            tier.recent = (copies, ids)
        return ids

    def _digest_of(self, message: dict[str, Any], key: Any) -> tuple[str, bool]:
        """The SHA-256 of a message's canonical JSON, and whether it is remembered by ``key``.
        Remembered when the key stands for the message exactly (every key a ``str``, every value
        a ``str`` or ``None``: two such keys are equal exactly when the messages' canonical JSON
        is), or when it is the message's JSON (a message holding a list, a dict or a number: see
        :func:`_message_keys`; orjson, in C, is cheaper than the canonical JSON and its hash). A
        message changed in place has another key or JSON, so it is hashed again."""
        remembered = True
        if key is not None:
            try:
                found = self._digests.get(key)
            except TypeError:  # unhashable
                key, remembered = _frozen(message), False
                found = self._digests.get(key) if key is not None else None
            if found is not None:
                return found, remembered
        digest = fmt.content_sha256(message)
        chars = _plain_chars(key) if key is not None else -1
        if chars < 0:
            return digest, False
        if len(self._digests) >= _KNOWN_MESSAGES or self._digest_chars + chars > _KNOWN_CHARS:
            self._forget()
        self._digests[key] = digest
        self._digest_chars += chars
        return digest, remembered

    def _system_sha256(self, text: Any) -> str:
        """The SHA-256 of a system prompt (the last one's remembered: most calls resend it)."""
        last = self._system_digest
        if last is not None and (last[0] is text or (type(text) is str and last[0] == text)):
            return last[1]
        digest = fmt.content_sha256(text)
        if type(text) is str:
            self._system_digest = (text, digest)
        return digest

    def _forget(self) -> None:
        """Drop the remembered message digests and entries (bounded memory: the keys hold the
        messages' text alive)."""
        self._digests.clear()
        self._digest_chars = 0
        for tier in self.tiers:
            tier.known.clear()

    def _message_entry(
        self, tier: _Tier, message: Any, parent_id: str, span_id: int | None, key: Any = None
    ) -> str | None:
        if not isinstance(message, dict):
            message, key = {"role": "unknown", "content": message}, None
        digest, remembered = self._digest_of(message, key)
        w = tier.writer
        found = w.message_entry(digest)
        if found is None:
            fields = {"type": fmt.MESSAGE, "layer": fmt.LAYER_AGENT, "ts": self._clock(), "digest": digest}
            if span_id is not None and w.live_entry(span_id) != parent_id:  # else: its parent's span
                fields["span_id"] = f"{span_id:016x}"
            fields.update(tier.policy.message(message, fmt.content_sha256(message.get("content"))))
            if tier is self.tiers[0]:  # counted once, however many tiers are written
                self.counts["messages"] += 1
            found = w.write(parent_id, fields, message=digest)
        if found is not None and remembered:
            tier.known[key] = found
        return found

    def _content_fields(
        self,
        tier: _Tier,
        parent_id: str,
        trace_hex: str,
        span_hex: str,
        content: dict[str, Any],
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        same: list[str] = []
        sid = int(span_hex, 16)
        for key, value in content.items():
            if key in MESSAGE_KEYS and isinstance(value, list):
                known = _snapshot_ids(tier, sid, key, value)
                if known is None:
                    ids = self._message_ids(tier, value, parent_id, sid, remember=key == "input_messages")
                    known = ids, 0
                out[key[:-1] + "_ids"] = _by_reference(tier.snapshot, *known)
                continue
            if key in fmt.CONTENT_CARRIED:  # a model call's system prompt, tool definitions
                frozen = _frozen(value)
                if frozen is not None and tier.content_raw.get(key) == frozen:
                    same.append(key)  # as the last model call's, before it was shown: not repeated
                    continue
                shown = tier.policy.content_value(key, value)
                tier.content_raw[key] = frozen
                # As shown now, not the shown object: that may be the agent's, changed in place since.
                said = _frozen(shown)
                if said is not None and tier.content.get(key) == said:
                    same.append(key)  # as the last model call said: not repeated
                    continue
                tier.content[key] = said
            elif key in CHECKPOINT_ONLY_KEYS and not tier.policy.full:
                continue  # never in a shareable tier, not even as a preview
            else:
                shown = tier.policy.content_value(key, value)
            out[key] = shown
        if same:
            out["same"] = same
        return out

    def snapshot(
        self,
        description: str = "",
        *,
        messages: list[Any] | None = None,
        system_prompt: str | None = None,
        state: dict[str, Any] | None = None,
        last_query: Any = None,
        last_result: Any = None,
        model_info: dict[str, Any] | None = None,
        tools_loaded: list[str] | None = None,
        span: Any = None,
        auto: bool = False,
        span_messages: tuple[list[Any], list[Any]] | None = None,
    ) -> int:
        """Record the conversation state so far; returns the 1-based snapshot id.

        An automatic snapshot (``auto``: a model call's, as it finishes) does not write its span's
        start when that is still queued: like the call's messages, it hangs under the entry the
        call's own end will hang under, and names the span (``trace_id``, ``span_id``).

        ``span_messages``: the lists the span's content holds as input and output messages, when
        ``messages`` is their items and neither changes before the span ends (a model call's
        snapshot, taken as it ends): the span's end takes their ids from this snapshot instead of
        comparing the conversation again."""
        if self._fork_pending:
            self._open_fork_files()
        # What is queued happened before this snapshot: it goes first.
        kept = self._flush_before(span) if auto and span is not None else self.flush()
        with self._lock:
            self.counts["snapshots"] += 1
            snapshot_id = self.counts["snapshots"]
            sid = span.get_span_context().span_id if span is not None else None
            parent_sid = getattr(getattr(span, "parent", None), "span_id", None)
            now = self._clock()
            messages = messages or []
            system_sha = self._system_sha256(system_prompt) if system_prompt else None
            cwd = self.env.cwd()
            # The fields whose showing costs (redaction, hashing), as they are before it: a field
            # as it was in the file's previous snapshot is taken from there.
            raw = {
                "description": description or "",
                "system_prompt": _frozen(system_prompt),
                "model_info": _frozen(model_info or {}),
                "cwd": cwd,
            }
            for tier in self.tiers:
                w = tier.writer
                if kept:  # its start is still queued: under its parent span's entry
                    parent = w.span_entry(parent_sid) or w.root_id
                else:
                    parent = self._span_entry(w, sid)
                message_ids = self._message_ids(tier, messages, parent, sid, remember=True)
                previous = tier.snapshot
                # The leading ids known equal to the previous snapshot's (taken from its list).
                known, same_ids = tier.prefix
                same_ids = same_ids if previous is not None and known is previous[1] else 0
                same = _same_fields(raw, tier.snapshot_raw) if previous is not None else ()
                before = previous[2] if previous is not None else {}
                policy = tier.policy
                carried: dict[str, Any] = {
                    "description": before["description"]
                    if "description" in same
                    else policy.text(description or ""),
                    "auto": auto,
                    "system_prompt": before["system_prompt"]
                    if "system_prompt" in same
                    else policy.content_value("system_prompt", system_prompt),
                    "system_prompt_sha256": system_sha,
                    "last_query": policy.content_value("last_query", last_query),
                    "last_result": policy.content_value("last_result", last_result),
                    "model_info": before["model_info"]
                    if "model_info" in same
                    else policy.value(model_info or {}),
                    "tools_loaded": list(tools_loaded or []),
                    "cwd": before["cwd"] if "cwd" in same else policy.text(cwd),
                }
                fields: dict[str, Any] = {
                    "type": fmt.SNAPSHOT,
                    "layer": fmt.LAYER_AGENT,
                    "ts": now,
                    "snapshot_id": snapshot_id,
                }
                if previous is None:
                    fields.update(carried)
                else:  # what is as in the previous snapshot is said there
                    fields["prev"] = previous[0]
                    before = previous[2]
                    if tuple(before) == tuple(carried):  # the same keys in the same order (always, so far)
                        # Only the keys whose values changed, found in C.
                        for key in compress(carried, map(operator.ne, carried.values(), before.values())):
                            fields[key] = carried[key]
                    else:
                        for key, value in carried.items():
                            if key not in before or before[key] != value:
                                fields[key] = value
                fields["message_ids"] = _by_reference(previous, message_ids, same_ids)
                fields["messages_count"] = len(message_ids)
                fields["entries_before"] = w.entries
                if state is not None:
                    fields["state"] = tier.policy.content_value("state", state)
                if span is not None and w.live_entry(sid) != parent:  # else: its parent's span
                    ctx = span.get_span_context()
                    fields["trace_id"] = f"{ctx.trace_id:032x}"
                    fields["span_id"] = f"{ctx.span_id:016x}"
                written = w.write(parent, fields, snapshot=True)
                if written is not None:
                    tier.snapshot = (written, message_ids, carried)
                    tier.snapshot_raw = raw
                tier.span_messages = None
                if span_messages is not None and sid is not None:
                    inputs, outputs = span_messages
                    if len(inputs) + len(outputs) == len(message_ids):
                        tier.span_messages = (sid, inputs, len(inputs), outputs, len(outputs), message_ids)
            return snapshot_id


# Remembered message digests (SessionRecorder._digest_of): at most this many, holding at most this
# many characters of message text alive; past either, all are forgotten (and hashed again once).
_KNOWN_MESSAGES = 16_384
_KNOWN_CHARS = 32 * 1024 * 1024


def _frozen(value: Any) -> Any:
    """A value as it is now, to tell later whether it is still so: a ``str`` itself, anything else
    its JSON (``None`` when it has none: never taken as unchanged)."""
    if type(value) is str:
        return value
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _export_or_say(export_zip: Any, recorder: Any, writer: Any) -> Any:
    """The ZIP of one tier's file, or ``None`` and a warning when the disk refuses it (full,
    read-only, gone): that is the machine's state, not a bug of ours."""
    try:
        return export_zip(recorder, writer)
    except OSError as exc:
        report_once(
            f"zip {writer.path}",
            "otel-agent-trace: the session ZIP for %s was not written: %s",
            writer.path,
            exc,
        )
        return None


def _snapshot_ids(tier: _Tier, sid: int, key: str, messages: list[Any]) -> tuple[list[Any], int] | None:
    """The ids of a model call's input or output messages as its automatic snapshot found them
    (see ``span_messages`` in SessionRecorder.snapshot), and how many of them lead the file's
    latest snapshot's ids (the inputs' all, when that is the snapshot they are from: not compared
    again); ``None`` when they are not known so."""
    known = tier.span_messages
    if known is None or known[0] != sid:
        return None
    _sid, inputs, n_in, outputs, n_out, ids = known
    if key == "input_messages" and messages is inputs and len(messages) == n_in:
        latest = tier.snapshot is not None and tier.snapshot[1] is ids
        return ids[:n_in], n_in if latest else 0
    if key == "output_messages" and messages is outputs and len(messages) == n_out:
        return ids[n_in:], 0
    return None


def _same_fields(raw: dict[str, Any], before: dict[str, Any]) -> tuple[str, ...]:
    """The fields of ``raw`` (see :func:`_frozen`) that are as in ``before``."""
    return tuple(name for name, value in raw.items() if value is not None and before.get(name) == value)


def _message_keys(messages: list[Any]) -> list[Any]:
    """Each message's key, always hashable: its items as a tuple when its values are all ``str`` or
    ``None`` (most messages; built in C for a list of dicts), else its JSON (:func:`_frozen`: a
    message holding tool calls, content parts or numbers), ``None`` for one that is neither a dict
    nor JSON. Either stands for the message exactly (see :meth:`SessionRecorder._digest_of`).
    (Found without raising: an exception costs a message more than the rest of its lookup.)"""
    try:
        keys = list(map(tuple, map(dict.items, messages)))
    except TypeError:  # not all dicts
        return [_message_keys([m])[0] if type(m) is dict else None for m in messages]
    if _STR_OR_NONE.issuperset(chain.from_iterable(map(map, repeat(type), map(dict.values, messages)))):
        return keys
    return [
        key if _STR_OR_NONE.issuperset(map(type, message.values())) else _frozen(message)
        for key, message in zip(keys, messages, strict=True)
    ]


_UNEQUAL = object()  # equal to no message


def _plain_copy(message: Any) -> Any:
    """A copy of a message whose keys are all ``str`` and values all ``str`` or ``None`` (equal to
    another message exactly when their canonical JSON is); ``_UNEQUAL`` for any other."""
    if type(message) is not dict or _plain_chars(tuple(message.items())) < 0:
        return _UNEQUAL
    return dict(message)


def _lookup(known: dict[Any, str], keys: list[Any]) -> list[str | None]:
    """``known.get`` of each key, in C; an unhashable key (a message holding a list or dict) is not
    found. Such keys are found by halving, so a few of them cost a few passes, not a loop."""
    try:
        return list(map(known.get, keys))
    except TypeError:
        if len(keys) == 1:
            return [None]
        middle = len(keys) // 2
        return _lookup(known, keys[:middle]) + _lookup(known, keys[middle:])


def _plain_chars(key: Any) -> int:
    """The characters of a message key whose keys are all ``str`` and values all ``str`` or
    ``None`` (a key that stands for its message's canonical JSON exactly), or of a message's JSON
    (bytes); -1 for any other key."""
    if type(key) is bytes:
        return len(key)
    if not key:
        return 0
    names, values = zip(*key, strict=True)  # (all in C)
    if set(map(type, names)) <= _STR_TYPE and set(map(type, values)) <= _STR_OR_NONE:
        return sum(map(len, filter(None, values)))
    return -1


_STR_TYPE = frozenset({str})
_STR_OR_NONE = frozenset({str, type(None)})


def _same_positions(messages: list[Any], copies: list[Any], own: bool) -> tuple[int, list[bool]]:
    """How many leading messages are those of ``copies`` (compared at once, in C: a message is
    taken as equal to itself without comparing it), and whether each message after them, up to
    the shorter list's end, is the one at its position in ``copies``: by identity for the
    capture's own copies (the very objects kept), else by equality (in C too). A conversation
    grown by a question and its answer costs about one pass, whatever it holds."""
    length = min(len(messages), len(copies))
    try:
        prefix = common_prefix(messages, copies)
        if prefix == length:
            return prefix, []
        compare = operator.is_ if own else operator.eq
        return prefix, list(map(compare, messages[prefix:length], copies[prefix:length]))
    except Exception:  # an odd object's comparison (not a message of ours): none is as it was
        return 0, [False] * length


def _by_reference(
    snapshot: tuple[str, list[Any], dict[str, Any]] | None, ids: list[Any], same: int = 0
) -> Any:
    """A list of message ids as written: by reference to the file's latest snapshot when that is
    shorter (``session_format.references``: its first ``n`` ids, or runs of them, then what is
    new), so a growing conversation, or one kept in a sliding window, adds only its new ids to the
    file. ``same``: how many leading ids are known to be the snapshot's (not compared again)."""
    if snapshot is None:
        return ids
    return _reference(snapshot[0], snapshot[1], ids, same)


def _free_child_tag(directory: Path, session_id: str, tag: str | None, settings: Settings) -> str | None:
    """``tag`` (``p<pid>``), or ``p<pid>-<n>`` when a process of that pid already wrote a child file
    of this session (a forked child that recorded, then exec'd a Python run under the plug-in)."""
    if not tag:
        return tag
    for n in range(1000):
        candidate = tag if n == 0 else f"{tag}-{n}"
        names = [fmt.session_file_name(session_id, tier, candidate) for tier in settings.tiers]
        if not any(os.path.lexists(directory / name) for name in names):
            return candidate
    return tag
