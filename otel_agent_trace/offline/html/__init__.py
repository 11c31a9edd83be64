"""``view --html``: a session as one self-contained HTML page — a waterfall timeline with the span
tree beside it, spans coloured by layer, details on click.

The page needs no network (CSS and script inline, no fonts or images fetched). Every value from
the file reaches the page as data inside a ``<script type="application/json">`` block (with ``<``,
``>`` and ``&`` escaped) and is put into the page with ``textContent`` only, so a span name or
attribute can never become markup or script.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import LoadedSession, load_session

from ._template import PAGE

MAX_SPANS = 20_000  # past this the page would be too slow to use; the rest is counted, not drawn


def _json_for_script(value: Any) -> str:
    """JSON that cannot end the ``<script>`` block it sits in, nor open a comment or entity."""
    text = orjson.dumps(value, default=str).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_data(session: LoadedSession) -> dict[str, Any]:
    """What the page draws: the session's facts and its spans (times in ns from the session start)."""
    spans = session.spans
    t0 = (
        min([session.root.timestamp_ns, *(s.start_ns for s in spans)]) if spans else session.root.timestamp_ns
    )
    last = max([e.timestamp_ns for e in session.events] or [t0])
    drawn = []
    for s in spans[:MAX_SPANS]:
        drawn.append(
            {
                "id": s.span_id,
                "parent": s.parent_span_id,
                "entry": s.entry_id,
                "name": s.name,
                "layer": s.layer,
                "kind": s.kind,
                "start": s.start_ns - t0,
                "end": (s.end_ns if s.end_ns is not None else last) - t0,
                "finished": s.finished,
                "status": s.status,
                "status_description": s.status_description,
                "attributes": s.attributes,
                "content": s.content,
                "events": [
                    {"name": e.get("name"), "at": (e.get("ts") or t0) - t0, "attributes": e.get("attributes")}
                    for e in s.events[:200]
                ],
            }
        )
    return {
        "session_id": session.session_id,
        "tier": session.tier,
        "complete": session.complete,
        "path": str(session.path.name),
        "duration_ns": last - t0,
        "spans": drawn,
        "spans_total": len(spans),
        "entries": len(session.events),
        "format": fmt.FORMAT_NAME,
    }


def render_html(session: LoadedSession) -> str:
    """The page for a loaded session, as text."""
    data = page_data(session)
    title = f"{session.session_id} — otel-agent-trace"
    return PAGE.replace("__TITLE_JSON__", _json_for_script(title)).replace(
        "__DATA_JSON__", _json_for_script(data)
    )


def write_html(path: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the page of the session at ``path`` to ``out`` (a new file or one to replace)."""
    session = load_session(path)
    target = Path(out)
    target.write_text(render_html(session), encoding="utf-8")
    return target


__all__ = ["MAX_SPANS", "page_data", "render_html", "write_html"]
