"""Reading the session tree back as nested (name, children) shapes, for exact assertions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import otel_agent_trace as oat

Tree = list[tuple[str, "Tree"]]


def spans_of(path: str | Path) -> list[Any]:
    return oat.load_session(path).spans


def tree(spans: list[Any], root: str | None = None) -> Tree:
    """The span tree under ``root`` (a span id; ``None``: spans whose parent is not recorded),
    children in start order."""
    ids = {s.span_id for s in spans}

    def children(parent: str | None) -> Tree:
        kids = [
            s
            for s in spans
            if (s.parent_span_id == parent if parent is not None else s.parent_span_id not in ids)
        ]
        kids.sort(key=lambda s: (s.start_ns, s.name))
        return [(s.name, children(s.span_id)) for s in kids]

    return children(root)


def by_name(spans: list[Any], name: str) -> Any:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{name}: {len(found)} spans"
    return found[0]


def ancestors(spans: list[Any], span: Any) -> list[Any]:
    """The span's ancestors recorded in ``spans``, nearest first."""
    by_id = {s.span_id: s for s in spans}
    out = []
    parent = by_id.get(span.parent_span_id)
    while parent is not None:
        out.append(parent)
        parent = by_id.get(parent.parent_span_id)
    return out
