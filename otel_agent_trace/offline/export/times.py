"""Times for entries that have none: a DM-Code-Agent ``timestamp`` that is not ISO-8601 (DM never
reads it; its own tests write ``"t0"``), which the loader reads as 0. Sent as 0, such a span sits
in 1970, where no Jaeger or Tempo search finds it, and every span of the file at the same instant.

An entry without a time is placed by file order, :data:`STEP_NS` after the nearest entry before it
that has one (squeezed to stay before the next known time), or, at the file's start, as many steps
before the first known time; a file with no known time at all ends at its modification time (when
it was last written, so when its last entry was). A DM run whose times are so estimated keeps the
duration DM measured (``run_end``'s ``duration_seconds``): it starts that long before its end.
Every span with an estimated time carries :data:`ESTIMATED_ATTRIBUTE`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from otel_agent_trace.offline.formats import dm
from otel_agent_trace.offline.loader import Event, LoadedSession, SpanRecord

ESTIMATED_ATTRIBUTE = "agent_trace.time.estimated"
STEP_NS = 1_000_000  # 1 ms between entries placed by file order


def estimate(times: list[int], anchor_ns: int) -> list[int]:
    """``times`` (0: unknown) with each unknown one placed by file order (see the module)."""
    known = [i for i, t in enumerate(times) if t > 0]
    if not known:
        last = len(times) - 1
        return [anchor_ns - (last - i) * STEP_NS for i in range(len(times))]
    out = list(times)
    first = known[0]
    for i in range(first):
        out[i] = times[first] - (first - i) * STEP_NS
    for at, index in enumerate(known):
        nxt = known[at + 1] if at + 1 < len(known) else None
        gap = (nxt - index) if nxt is not None else 0
        step = STEP_NS
        if nxt is not None and gap > 1:
            step = max(min(STEP_NS, (times[nxt] - times[index]) // gap), 0)
        end = nxt if nxt is not None else len(times)
        for k, i in enumerate(range(index + 1, end), start=1):
            out[i] = times[index] + k * step
    return out


def _run_ends(events: list[Event]) -> dict[str, Event]:
    """Each DM run's ``run_start`` id to the entry that ended it (as :func:`dm.spans` pairs them)."""
    ends: dict[str, Event] = {}
    start: str | None = None
    for e in events:
        if e.type == dm.RUN_START:
            start = e.id
        elif e.type in (dm.RUN_END, dm.RUN_ERROR) and start is not None:
            ends[start] = e
            start = None
    return ends


def spans_with_times(session: LoadedSession, path: Path) -> tuple[list[SpanRecord], int, int]:
    """The session's spans, each unknown time estimated: ``(spans, entries estimated, last time)``."""
    events = session.events
    unknown = {e.id for e in events if e.timestamp_ns <= 0}
    if not unknown:
        return session.spans, 0, max((e.timestamp_ns for e in events), default=0)
    try:
        anchor = path.stat().st_mtime_ns
    except OSError:
        anchor = 0
    times = estimate([e.timestamp_ns for e in events], anchor)
    placed = [dataclasses.replace(e, timestamp_ns=t) for e, t in zip(events, times, strict=True)]
    records = session.format.spans(placed)
    ends = _run_ends(placed) if session.format is dm else {}
    for record in records:
        end = ends.get(record.entry_id)
        if record.entry_id in unknown or (end is not None and end.id in unknown):
            record.attributes[ESTIMATED_ATTRIBUTE] = True
            if end is not None and record.end_ns is not None:
                measured = dm.run_end_facts(end.data)[1]
                if measured is not None:
                    record.start_ns = min(record.start_ns, record.end_ns - int(measured * 1e9))
    return records, len(unknown), max(times, default=0)
