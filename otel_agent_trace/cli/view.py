"""``otel-agent-trace view FILE``: the session tree, one line per span, event, message, snapshot."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import iter_entries


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="print a session's tree")
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument("--json", action="store_true", help="print the entries as JSON lines")
    p.add_argument("--layer", choices=fmt.LAYERS, help="only entries of this layer")
    p.set_defaults(func=run)


def _describe(entry: dict[str, Any], alone: bool = False) -> str:
    """One line for an entry (``alone``: a span's end entry with no start entry before it)."""
    kind = entry.get("type")
    if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
        meta = entry.get("metadata") or {}
        return f"{kind} {entry.get('session_id')} tier={entry.get('tier')} pid={meta.get('pid')}"
    if kind == fmt.SESSION_END:
        return f"session.end after {(entry.get('duration_ns') or 0) / 1e9:.3f}s counts={entry.get('counts')}"
    if kind == fmt.SPAN_END:
        status = (entry.get("status") or {}).get("code")
        took = f"{(entry.get('duration_ns') or 0) / 1e6:.1f}ms {status}"
        if alone:  # a short span: no start entry, the end says it all
            return f"{entry.get('name')} [{entry.get('layer')}] {took}"
        return f"└ end {entry.get('name')} {took}"
    if kind == fmt.SPAN_START:
        return f"{entry.get('name')} [{entry.get('layer')}]"
    if kind == fmt.SPAN_EVENT:
        attrs = entry.get("attributes") or {}
        detail = " ".join(f"{k}={v}" for k, v in list(attrs.items())[:3])
        return f"· {entry.get('name')} {detail}"
    if kind == fmt.MESSAGE:
        content = entry.get("content")
        if isinstance(content, str):
            text = content.replace("\n", " ")[:80]
        else:
            text = f"<{entry.get('content_chars')} chars sha256={str(entry.get('content_sha256'))[:12]}>"
        return f"✉ {entry.get('role')}: {text}"
    if kind == fmt.SNAPSHOT:
        return f"📸 snapshot #{entry.get('snapshot_id')} {entry.get('description', '')}"
    return str(kind)


def run(args: argparse.Namespace) -> int:
    issues: list[fmt.ReadIssue] = []
    depth: dict[str, int] = {}
    span_depth: dict[str, int] = {}  # span id -> depth, to hang a child process under its span
    out = sys.stdout
    for entry in iter_entries(args.path, issues):
        eid = entry.get("id", "")
        kind = entry.get("type")
        level = depth.get(entry.get("parent_id") or "", -1) + 1
        alone = False
        if kind == fmt.SPAN_END:
            if entry.get("span_id") in span_depth:  # under its start entry
                level = max(level - 1, 0)
            else:
                alone = True
                span_depth[entry.get("span_id", "")] = level
        elif kind == fmt.SPAN_START:
            span_depth[entry.get("span_id", "")] = level
        elif kind == fmt.SESSION_JOIN:
            parent_span = (entry.get("metadata") or {}).get("parent_span_id") or ""
            level = span_depth.get(parent_span, -1) + 1
        depth[eid] = level
        if args.layer and entry.get("layer") != args.layer:
            continue
        if args.json:
            out.write(fmt.dumps(entry).decode())
        else:
            out.write(f"{eid}  {'  ' * level}{_describe(entry, alone)}\n")
    for issue in issues:
        print(f"warning: {issue}", file=sys.stderr)
    # A torn last line is what a killed writer leaves: expected. Any other bad line is not.
    return 1 if any(not issue.reason.startswith("torn") for issue in issues) else 0
