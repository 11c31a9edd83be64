"""``view``: what the line of one entry says: a span's with the facts of its kind (model, tool,
process, HTTP), its duration and status; a message's, an event's, a snapshot's, a session entry's,
and another format's entry's. Every value from the file goes through
:mod:`otel_agent_trace.offline.terminal` and is cut to :data:`VALUE_CHARS` unless ``full``."""

from __future__ import annotations

import shlex
from typing import Any

import orjson

from otel_agent_trace import semconv as sc
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import terminal as term

# Characters of one value (arguments, results, URLs) before the whole line is cut to the width.
VALUE_CHARS = 80
MODEL_OPERATIONS = {sc.OP_CHAT, sc.OP_TEXT_COMPLETION, sc.OP_GENERATE_CONTENT, sc.OP_EMBEDDINGS}
FILE_MODE = "agent_trace.file.mode"


def _preview(value: Any, full: bool) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = orjson.dumps(value, default=str).decode()
    return term.fit(value, None if full else VALUE_CHARS)


def _attr(attrs: dict[str, Any], key: str) -> Any:
    value = attrs.get(key)
    return value if value not in (None, "", []) else None


def span_facts(entry: dict[str, Any], full: bool = False) -> list[str]:
    """The key facts of a span for its kind: model, tool, process, HTTP (each a cleaned string)."""
    attrs = entry.get("attributes")
    attrs = attrs if isinstance(attrs, dict) else {}
    content = entry.get("content")
    content = content if isinstance(content, dict) else {}
    facts: list[str] = []
    op = attrs.get(sc.GEN_AI_OPERATION_NAME)
    if op in MODEL_OPERATIONS:
        model = _attr(attrs, sc.GEN_AI_RESPONSE_MODEL) or _attr(attrs, sc.GEN_AI_REQUEST_MODEL)
        if model is not None and str(model) not in str(entry.get("name")):
            facts.append(f"model={term.fit(model, VALUE_CHARS)}")
        tokens_in = attrs.get(sc.GEN_AI_USAGE_INPUT_TOKENS)
        tokens_out = attrs.get(sc.GEN_AI_USAGE_OUTPUT_TOKENS)
        if tokens_in is not None or tokens_out is not None:
            facts.append(
                f"tokens {term.clean(tokens_in if tokens_in is not None else '?')}"
                f"→{term.clean(tokens_out if tokens_out is not None else '?')}"
            )
        reasons = _attr(attrs, sc.GEN_AI_RESPONSE_FINISH_REASONS)
        if reasons is not None:
            joined = ",".join(map(str, reasons)) if isinstance(reasons, list) else reasons
            facts.append(f"finish={term.fit(joined, VALUE_CHARS)}")
        asked = _attr(attrs, sc.TOOL_CALL_NAMES)
        if asked is not None:
            joined = ",".join(map(str, asked)) if isinstance(asked, list) else asked
            facts.append(f"asks {term.fit(joined, None if full else VALUE_CHARS)}")
    elif op == sc.OP_EXECUTE_TOOL or sc.GEN_AI_TOOL_NAME in attrs:
        call_id = _attr(attrs, sc.GEN_AI_TOOL_CALL_ID)
        if call_id is not None:
            facts.append(f"id={term.fit(call_id, VALUE_CHARS)}")
        arguments = content.get("tool_arguments", attrs.get(sc.GEN_AI_TOOL_CALL_ARGUMENTS))
        if arguments is not None:
            facts.append(f"args={_preview(arguments, full)}")
        result = content.get("tool_result", attrs.get(sc.GEN_AI_TOOL_CALL_RESULT))
        if result is not None:
            facts.append(f"→ {_preview(result, full)}")
    elif sc.PROCESS_COMMAND_ARGS in attrs or sc.PROCESS_EXIT_CODE in attrs:
        argv = attrs.get(sc.PROCESS_COMMAND_ARGS)
        if isinstance(argv, list):
            facts.append(_preview(shlex.join(map(str, argv)), full))
        elif argv is not None:
            facts.append(_preview(argv, full))
        if sc.PROCESS_EXIT_CODE in attrs:
            facts.append(f"exit={term.clean(attrs[sc.PROCESS_EXIT_CODE])}")
    elif sc.HTTP_REQUEST_METHOD in attrs or sc.URL_FULL in attrs:
        method = attrs.get(sc.HTTP_REQUEST_METHOD)
        if method is not None and str(method) != str(entry.get("name")):
            facts.append(term.fit(method, 16))
        if sc.URL_FULL in attrs:
            facts.append(_preview(attrs[sc.URL_FULL], full))
        if sc.HTTP_RESPONSE_STATUS_CODE in attrs:
            facts.append(f"→ {term.clean(attrs[sc.HTTP_RESPONSE_STATUS_CODE])}")
    return facts


def _event_facts(entry: dict[str, Any], full: bool) -> list[str]:
    attrs = entry.get("attributes")
    attrs = attrs if isinstance(attrs, dict) else {}
    if sc.FILE_PATH in attrs:
        facts = [_preview(attrs[sc.FILE_PATH], full)]
        if FILE_MODE in attrs:
            facts.append(f"mode={term.fit(attrs[FILE_MODE], 8)}")
        return facts
    picked = [k for k in attrs if not k.startswith("session.")][:3]
    return [f"{term.fit(k, 40)}={_preview(attrs[k], full)}" for k in picked]


def error_status(entry: dict[str, Any], full: bool) -> str:
    status = entry.get("status")
    status = status if isinstance(status, dict) else {}
    if status.get("code") != fmt.STATUS_ERROR:
        return ""
    description = status.get("description")
    return "ERROR" + (f": {_preview(description, full)}" if description else "")


def span_text(
    start: dict[str, Any],
    end: dict[str, Any] | None,
    full: bool,
    closing: bool = False,
    unfinished: bool = False,
) -> str:
    """A span's line: from its end entry when it has ended, else from its start entry."""
    shown = end if end is not None else start
    parts = [("└ end " if closing else "") + term.fit(shown.get("name", "?"), None if full else VALUE_CHARS)]
    if not closing:
        parts.append(f"[{term.fit(shown.get('layer', '?'), 8)}]")
    if end is None:
        parts.append("UNFINISHED" if unfinished else "…")
    else:
        took = end.get("duration_ns")
        if isinstance(took, (int, float)) and not isinstance(took, bool):
            parts.append(term.duration(took / 1e9))
        parts.append(error_status(end, full))
    parts += span_facts(shown, full)
    return " ".join(p for p in parts if p)


def _message_text(entry: dict[str, Any], full: bool) -> str:
    content = entry.get("content", entry.get("content_preview"))  # DevDuck keeps a preview
    if content is not None:
        text = _preview(content, full)
    else:
        text = f"<{term.clean(entry.get('content_chars', '?'))} chars>"
    calls = entry.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = [
            str(
                (c.get("function") or {}).get("name")
                if isinstance(c.get("function"), dict)
                else c.get("name")
            )
            for c in calls
            if isinstance(c, dict)
        ]
        text += f" calls {term.fit(','.join(names), VALUE_CHARS)}"
    if entry.get("tool_call_id"):
        text += f" (for {term.fit(entry['tool_call_id'], VALUE_CHARS)})"
    return f"✉ {term.fit(entry.get('role', '?'), None if full else 24)}: {text}"


_STANDARD_FIELDS = {
    "id",
    "parent_id",
    "type",
    "layer",
    "ts",
    "trace_id",
    "span_id",
    "name",
    "session_id",
    "run_id",
}


def _foreign_text(entry: dict[str, Any], full: bool) -> str:
    """An entry of a type we do not know (DevDuck's ``file.open``, ``tool.call``, DM's events, as
    the loader maps them): its type, name, layer and first few fields."""
    kind = entry.get("type") or "?"
    parts = [term.fit(kind, VALUE_CHARS)]
    if entry.get("name") is not None:
        parts.append(term.fit(entry["name"], None if full else VALUE_CHARS))
    if entry.get("layer"):
        parts.append(f"[{term.fit(entry['layer'], 8)}]")
    data = entry.get("data", entry.get("payload"))
    fields = data if isinstance(data, dict) else {k: v for k, v in entry.items() if k not in _STANDARD_FIELDS}
    for key in list(fields)[:3]:
        if fields[key] is not None:
            parts.append(f"{term.fit(key, 40)}={_preview(fields[key], full)}")
    return " ".join(parts)


def describe(entry: dict[str, Any], full: bool = False) -> str:
    """One line of text for an entry that is not a span (spans: :func:`span_text`)."""
    kind = entry.get("type")
    if kind in (fmt.SESSION_START, fmt.SESSION_JOIN):
        meta = entry.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        session_id = term.fit(entry.get("session_id", "?"), VALUE_CHARS)
        text = f"{kind} {session_id}"
        if entry.get("tier") is not None:
            text += f" tier={term.fit(entry['tier'], 16)}"
        if meta.get("pid") is not None:
            text += f" pid={term.fit(meta['pid'], 16)}"
        if kind == fmt.SESSION_JOIN and meta.get("parent_span_id"):
            text += f" (child process, under span {term.fit(meta['parent_span_id'], 32)})"
        return text
    if kind == fmt.SESSION_END:
        took = entry.get("duration_ns")
        seconds = took / 1e9 if isinstance(took, (int, float)) and not isinstance(took, bool) else None
        text = f"session.end after {term.duration(seconds)}"
        if entry.get("unfinished_spans"):
            text += f" unfinished_spans={term.clean(entry['unfinished_spans'])}"
        return text
    if kind == fmt.SPAN_EVENT:
        return " ".join(["·", term.fit(entry.get("name", "?"), VALUE_CHARS), *_event_facts(entry, full)])
    if kind == fmt.MESSAGE:
        return _message_text(entry, full)
    if kind == fmt.SNAPSHOT:
        description = entry.get("description")
        text = f"snapshot #{term.fit(entry.get('snapshot_id', '?'), 12)}"
        if description:
            text += f" {_preview(description, full)}"
        if entry.get("messages_count") is not None:
            text += f" ({term.clean(entry['messages_count'])} messages)"
        return text
    return _foreign_text(entry, full)
