"""Dry replay: walk a recorded session in file order, check it, and run nothing.

The checks are what a reader of the timeline relies on: every parent is an entry seen before its
child (the file is a tree written in order), ids are unique, a span ends no earlier than it
started, and spans that never ended (a killed process) are named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from otel_agent_trace import session_format as fmt


@dataclass
class Finding:
    """One thing dry replay noticed: ``kind`` (``missing_parent``, ``out_of_order``,
    ``duplicate_id``, ``negative_duration``, ``unfinished_span``, ``read_issue``) and where."""

    kind: str
    entry_id: str
    detail: str

    @property
    def is_error(self) -> bool:
        """Unfinished spans and a torn last line are what a killed process leaves: not errors."""
        return self.kind not in ("unfinished_span", "read_issue")


@dataclass
class ReplayReport:
    """What :func:`replay_events` walked and found."""

    entries: int = 0
    first_id: str = ""
    last_id: str = ""
    counts: dict[str, int] = field(default_factory=dict[str, int])
    findings: list[Finding] = field(default_factory=list[Finding])
    complete: bool = False
    stopped_early: bool = False

    @property
    def ok(self) -> bool:
        return not any(f.is_error for f in self.findings)


class EntryNotFound(LookupError):
    """An entry reference matched no entry, or more than one."""


def resolve_id(ids: list[str], ref: str) -> str:
    """An exact entry id, else the one id ``ref`` is a unique prefix of; a clear error listing the
    candidates otherwise (the DM seed's rule)."""
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)] if ref else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        hint = f" (the ids run from {ids[0]} to {ids[-1]})" if ids else ""
        raise EntryNotFound(f"no entry matches {ref!r}{hint}")
    shown = ", ".join(matches[:10]) + (f", … ({len(matches)} in all)" if len(matches) > 10 else "")
    raise EntryNotFound(f"{ref!r} is ambiguous: matches {shown}")


def replay_events(
    session: Any,
    callback: Callable[[Any], Any] | None = None,
    *,
    start: str | None = None,
    end: str | None = None,
) -> ReplayReport:
    """Walk ``session.events`` in file order from ``start`` to ``end`` (entry ids or unique
    prefixes, both included), calling ``callback(event)`` for each; a callback that returns
    ``False`` stops the walk. The whole file is checked (parents, order, unfinished spans) whatever
    the range, and nothing recorded is ever run. Returns a :class:`ReplayReport`."""
    events = session.events
    ids = [e.id for e in events]
    first = resolve_id(ids, start) if start else None
    last = resolve_id(ids, end) if end else None
    report = ReplayReport(complete=bool(session.complete))
    report.findings.extend(_check(session))
    walking = first is None
    for event in events:
        if not walking and event.id == first:
            walking = True
        if not walking:
            continue
        report.entries += 1
        report.first_id = report.first_id or event.id
        report.last_id = event.id
        key = event.event_type
        report.counts[key] = report.counts.get(key, 0) + 1
        if callback is not None and callback(event) is False:
            report.stopped_early = event.id != last
            break
        if last is not None and event.id == last:
            break
    return report


def _check(session: Any) -> list[Finding]:
    findings: list[Finding] = []
    for issue in getattr(session, "issues", ()) or ():
        findings.append(Finding("read_issue", "", str(issue)))
    seen: set[str] = set()
    all_ids = {e.id for e in session.events}
    for event in session.events:
        if event.id in seen:
            findings.append(Finding("duplicate_id", event.id, "id used by an earlier entry"))
        parent = event.parent_id
        if parent and parent not in seen:
            if parent in all_ids:
                findings.append(Finding("out_of_order", event.id, f"parent {parent} comes after it"))
            elif event.type != fmt.SESSION_JOIN:  # a child file hangs under the parent's span
                findings.append(Finding("missing_parent", event.id, f"parent {parent} is not in the file"))
        seen.add(event.id)
    for span in session.spans:
        if not span.finished:
            findings.append(
                Finding("unfinished_span", span.entry_id, f"{span.name} ({span.span_id}) never ended")
            )
        elif span.end_ns is not None and span.end_ns < span.start_ns:
            findings.append(Finding("negative_duration", span.entry_id, f"{span.name} ends before it starts"))
    return findings
