"""A recording session: the orchestrator of its files (one per tier), its start queue, message
store and snapshots, and the ZIP at stop.

Spans come in from the span processor; their entries are built by :mod:`.span_entries`, queued
by :mod:`.start_queue` (a span's start) and written per tier (:mod:`.tier_state`,
:mod:`.writer`); messages go through :mod:`.message_store`, a span's content through
:mod:`.span_content`, snapshots through :mod:`.snapshots`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal import sdk_compat, sink
from otel_agent_trace._internal.guard import never_raise, own_io, report_once
from otel_agent_trace.settings import TIER_CHECKPOINT, Settings, get_settings

from .environment import LIVE, Environment
from .message_store import MessageStore, message_key
from .session_root import free_child_tag, root_entry
from .snapshots import SnapshotRequest, Snapshots
from .span_content import SpanContent
from .span_entries import LiveSpan, end_entry, event_entry, layer_of, said_once, start_entry
from .span_entries import dropped_counts as _dropped
from .span_entries import status_fields as _status_fields
from .start_queue import MAX_QUEUED, QueuedEvent, StartQueue
from .tier_state import TierState
from .tiers import CHECKPOINT_ONLY_KEYS, TierPolicy, prepare_directory, tier_file
from .writer import END, EVENT, START, SessionFileExists, SpanLine, TierWriter

_attributes_of = sdk_compat.span_attributes


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
        # The tiers' files, and the counts written in session.end: kept as the same objects for
        # the life of the recorder (the message store and snapshots hold them).
        self.tiers: list[TierState] = []
        self.zip_paths: list[str] = []
        self.counts = {"spans": 0, "events": 0, "messages": 0, "snapshots": 0, "sys_events_dropped": 0}
        self._written_events: dict[int, set[tuple[str, int]]] = {}
        self._sys_counts: dict[int, int] = {}
        self._live: dict[int, LiveSpan] = {}
        self._trace_hex: dict[int, str] = {}  # trace id → hex, for the spans of traces in flight
        self.message_store = MessageStore(self._clock, self.counts, self.tiers)
        self._content = SpanContent(self.message_store)
        self._snapshots = Snapshots(self.message_store, self.tiers, env.cwd)
        self._lock = threading.RLock()
        self._started = False
        self._stopped = False
        self._fork_pending = False
        self._queue = StartQueue(self.settings.flush_ms, self._lock, self._flush_queue)

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
                self.child_tag = free_child_tag(
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
                root=root_entry(self, tier, policy),
                root_parent=dict(self.settings.inherited_parent_entries).get(tier, "")
                if self.is_child
                else "",
                lock=self._lock,
            )
            self.tiers.append(TierState(writer, policy))

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
        self.tiers.clear()

    def stop(self) -> list[str]:
        """End the session: write ``session.end``, close the files and export the ZIPs."""
        with self._lock:
            if not self._started or self._stopped:
                return list(self.zip_paths)
            self._flush_queue()  # spans still running are in the file, marked unfinished
            self._stopped = True
            self._queue.stop()
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
        self.tiers.clear()
        self.zip_paths = []
        self.counts.update(dict.fromkeys(self.counts, 0))
        for pending in (self._content.pending, self._written_events, self._sys_counts, self._live):
            pending.clear()
        # The parent's queued starts are the parent's to write.
        self._queue = StartQueue(self.settings.flush_ms, self._lock, self._flush_queue)
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

    # --- spans (see start_queue for when a start reaches the file) ------------------------------

    def on_span_start(self, span: Any) -> None:
        if self._stopped:
            return
        if self._fork_pending:
            self._open_fork_files()
        self.counts["spans"] += 1
        q = self._queue
        if q.window:
            pending = q.items
            pending.append(span)  # atomic; the lock is only taken to write
            if len(pending) >= MAX_QUEUED:
                with self._lock:
                    self._flush_queue()
            elif q.idle:
                q.wake()
        else:
            with self._lock:
                q.items.append(span)
                self._flush_queue()

    def _parent_of(self, span: Any) -> tuple[int | None, str | None]:
        """A span's parent span id and its hex (from the parent's memo when it is in flight)."""
        parent = span.parent
        if parent is None:
            return None, None
        parent_sid = parent.span_id
        in_flight = self._live.get(parent_sid)
        return parent_sid, in_flight.span_hex if in_flight is not None else f"{parent_sid:016x}"

    def _trace_hex_of(self, trace_id: int) -> str:
        """A trace id as hex, remembered for the spans of traces in flight (bounded)."""
        found = self._trace_hex.get(trace_id)
        if found is None:
            if len(self._trace_hex) >= 1024:
                self._trace_hex.clear()
            found = self._trace_hex[trace_id] = f"{trace_id:032x}"
        return found

    def _flush_queue(self, queued: list[Any] | None = None) -> None:
        """Write queued starts and events (``queued``, or the whole queue) in one system call per
        file. The caller holds the lock."""
        if queued is None:
            queued = self._queue.take()
            if not queued:
                return
        per_tier: list[list[SpanLine]] = [[] for _ in self.tiers]
        self._queued_lines(queued, per_tier)
        for tier, lines in zip(self.tiers, per_tier, strict=True):
            if lines:
                tier.writer.write_spans(lines)

    def _queued_lines(self, queued: list[Any], per_tier: list[list[SpanLine]]) -> None:
        """The entries of queued span starts and events, in order, per tier."""
        for item in queued:
            if type(item) is QueuedEvent:
                self._event_lines(item, per_tier)
            else:
                self._start_lines(item, per_tier)

    def _event_lines(self, event: QueuedEvent, per_tier: list[list[SpanLine]]) -> None:
        ctx = event.span.get_span_context()
        sid = ctx.span_id
        memo = self._live.get(sid)
        if memo is not None:
            trace_hex, span_hex = memo.trace_hex, memo.span_hex
        else:
            trace_hex, span_hex = f"{ctx.trace_id:032x}", f"{sid:016x}"
        if per_tier:  # (counted once, however many tiers are written)
            self.counts["events"] += 1
        for tier, lines in zip(self.tiers, per_tier, strict=True):
            entry = event_entry(
                tier, trace_hex, span_hex, event.layer, event.name, event.ts, event.attributes
            )
            lines.append(SpanLine(entry, sid, EVENT, None))

    def _start_lines(self, span: Any, per_tier: list[list[SpanLine]]) -> None:
        """A span's ``span.start`` entry per tier (appended to ``per_tier``), remembered for its end.
        Its start time, with the name and attributes it has now (a start written late, by the
        flusher or because something was written under it, may know more than the span did when
        it started)."""
        name = span.name
        attrs = _attributes_of(span)
        said_once(attrs, self.session_id)
        ctx = span.context
        sid = ctx.span_id
        parent_sid, parent_hex = self._parent_of(span)
        trace_hex = self._trace_hex_of(ctx.trace_id)
        span_hex = f"{sid:016x}"
        layer = layer_of(attrs)
        kind = span.kind.name
        ts = span.start_time
        shown = []
        for index, tier in enumerate(self.tiers):
            view = tier.show(name, attrs)
            shown.append(view)
            entry = start_entry(view, layer, ts, kind, trace_hex, span_hex, parent_hex)
            per_tier[index].append(SpanLine(entry, sid, START, parent_sid))
        self._live[sid] = LiveSpan(layer, trace_hex, span_hex, name, attrs, shown)

    def on_span_end(self, span: Any) -> None:
        if self._stopped:
            return
        if self._fork_pending:
            self._open_fork_files()
        ctx = span.context
        sid = ctx.span_id
        pending = self._queue.items
        if (
            not pending
            or pending[-1].context is not ctx
            or sdk_compat.has_events(span)
            or sid in self._content.pending
            or sid in self._sys_counts
        ):
            self._end_span(span, ctx, sid)
            return
        # The hot path: a span that ends with nothing written under it and its start still queued
        # last (most spans: a tool or model call with no children). Its ``span.end`` entry alone
        # records it, under its parent span's entry.
        attrs = _attributes_of(span)
        said_once(attrs, self.session_id)
        name = span.name
        parent_sid, parent_hex = self._parent_of(span)
        status_fields = _status_fields(span.status)
        end = span.end_time
        layer = layer_of(attrs)
        kind = span.kind.name
        # Known if another span of its trace was written; not remembered for one that ends here.
        trace_hex = self._trace_hex.get(ctx.trace_id) or f"{ctx.trace_id:032x}"
        span_hex = f"{sid:016x}"
        duration = (end or 0) - (span.start_time or 0)
        dropped = _dropped(span)
        with self._lock:
            starts = self._queue.take(without=ctx)
            if starts:  # queued by other threads meanwhile, or spans still running around this one
                self._flush_queue(starts)
                self._live.pop(sid, None)  # (this span among them, if another thread queued after it)
            for tier in self.tiers:
                entry = end_entry(
                    tier, tier.show(name, attrs), layer, end, kind, trace_hex, span_hex, parent_hex,
                    duration, status_fields, dropped,
                )  # fmt: skip
                tier.writer.write_end(entry, sid, parent_sid)

    def _end_span(self, span: Any, ctx: Any, sid: int) -> None:
        """A span's end in general: its start may be written, it may have events and content."""
        # Most spans have no content, events written early or system events: skip those lookups.
        pending_content = self._content.pending
        content = pending_content.pop(sid, None) if pending_content else None
        written = self._written_events.pop(sid, None) if self._written_events else None
        if self._sys_counts:
            self._sys_counts.pop(sid, None)
        attrs = _attributes_of(span)
        said_once(attrs, self.session_id)
        name = span.name
        parent_sid, parent_hex = self._parent_of(span)
        # The SDK copies its event list on each access; skip that when there are none.
        events = span.events if sdk_compat.has_events(span) else ()
        if written and events:
            events = [e for e in events if (e.name, e.timestamp) not in written]
        status_fields = _status_fields(span.status)
        dropped = _dropped(span)
        end = span.end_time
        duration = (end or 0) - (span.start_time or 0)
        tiers = self.tiers
        with self._lock:
            per_tier: list[list[SpanLine]] = [[] for _ in tiers]
            # Its own start is needed only when its events hang under it: its content goes in its
            # end entry, and messages it brings hang where that end does (naming the span).
            started = sid in self._live
            self._queued_lines(self._queue.take(without=None if events else ctx), per_tier)
            memo = self._live.pop(sid, None)
            if memo is not None and not started:  # its start goes with its end: the end says it all
                for lines in per_tier:
                    for line in lines:
                        if line.span_id == sid and line.role is START:
                            line.entry.pop("attributes", None)
            if memo is not None:
                trace_hex, span_hex, layer = memo.trace_hex, memo.span_hex, memo.layer
                # Reuse what its start showed (redacted) while name and attributes are unchanged.
                shown = memo.shown if name == memo.name and attrs == memo.attributes else None
            else:  # its start was not written (a short span), or it started before this session
                trace_hex = self._trace_hex_of(ctx.trace_id)
                layer, span_hex = layer_of(attrs), f"{sid:016x}"
                shown = None
            kind = span.kind.name
            if tiers:  # (counted once, however many tiers are written)
                self.counts["events"] += len(events)
            for index, tier in enumerate(tiers):
                lines = per_tier[index]
                for event in events:
                    entry = event_entry(
                        tier, trace_hex, span_hex, layer, event.name, event.timestamp, event.attributes
                    )
                    lines.append(SpanLine(entry, sid, EVENT, parent_sid))
                entry = end_entry(
                    tier, shown[index] if shown is not None else tier.show(name, attrs), layer, end, kind,
                    trace_hex, span_hex, parent_hex, duration, status_fields, dropped,
                )  # fmt: skip
                w = tier.writer
                if content:  # its messages go first, under its start entry (else where its end goes)
                    if lines:
                        w.write_spans(lines)
                        lines = []
                    start_id = w.span_entry(sid) or w.span_entry(parent_sid) or w.root_id
                    fields = self._content.fields(tier, start_id, span_hex, content)
                    if fields:  # (none when all it had is checkpoint-only and this tier is not)
                        entry["content"] = fields
                lines.append(SpanLine(entry, sid, END, parent_sid))
                w.write_spans(lines)

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
        if found is None and (self._queue.window or self._queue.items):
            with self._lock:  # its start may be queued, or being written by another thread
                self._flush_queue()
            found = writer.span_entry(span_id)
        return found or writer.root_id

    # --- capture-facing API (see otel_agent_trace._internal.sink) --------------------------

    def attach_content(self, span: Any, content: dict[str, Any]) -> None:
        """Full-fidelity content of a span (messages, tool arguments/results), kept off the span
        itself so it never reaches OTLP; written with the span's end, per tier."""
        sid = span.get_span_context().span_id
        with self._lock:
            self._content.attach(sid, content)

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
        n = 0
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
        q = self._queue
        q.items.append(QueuedEvent(span, name, ts, dict(attributes) if attributes else None, layer))
        if not q.window or len(q.items) >= MAX_QUEUED:
            with self._lock:
                self._flush_queue()
        elif q.idle:
            q.wake()
        return True

    def flush(self) -> None:
        """Write what is queued (span starts, span events) now."""
        if self._queue.items:
            with self._lock:
                if not self._stopped:
                    self._flush_queue()

    def _flush_before(self, span: Any) -> bool:
        """Write what is queued but ``span``'s start when that is the last thing queued (it stays
        queued: a span that ends next needs none). Returns whether it was kept."""
        if not self._queue.items:
            return False
        with self._lock:
            if self._stopped:
                return False
            ctx = span.get_span_context()
            items = self._queue.take()
            kept = bool(items) and items[-1].context is ctx
            if kept:
                start = items.pop()
            if items:
                self._flush_queue(items)
            if kept:
                self._queue.put_back(start)  # queued after it meanwhile: after it still
            return kept

    def record_message(self, role: str, content: Any, span: Any = None, **extra: Any) -> str | None:
        """Write one conversation message (once; repeats are found by hash). Returns its id in
        the first file."""
        if self._fork_pending:
            self._open_fork_files()
        self.flush()  # what is queued happened before this message: it goes first
        message = {"role": role, "content": content, **extra}
        sid = span.get_span_context().span_id if span is not None else None
        key = message_key(message)
        with self._lock:
            ids = [
                self.message_store.message_entry(t, message, self._span_entry(t.writer, sid), sid, key)
                for t in self.tiers
            ]
        return ids[0] if ids else None

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
        request = SnapshotRequest(
            description, messages or [], system_prompt, state, last_query, last_result,
            model_info, tools_loaded, auto, span_messages,
        )  # fmt: skip
        with self._lock:
            self.counts["snapshots"] += 1
            snapshot_id = self.counts["snapshots"]
            sid = span.get_span_context().span_id if span is not None else None
            if kept:  # its start is still queued: under its parent span's entry
                parent_sid = getattr(getattr(span, "parent", None), "span_id", None)
                parents = [t.writer.span_entry(parent_sid) or t.writer.root_id for t in self.tiers]
            else:
                parents = [self._span_entry(t.writer, sid) for t in self.tiers]
            self._snapshots.write(snapshot_id, self._clock(), request, span, parents)
            return snapshot_id


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
