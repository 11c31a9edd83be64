"""The conversation as it stood at any entry of a session of ours: the latest run's messages
(a model call's input and output, a snapshot's, messages recorded since), with the result of each
tool call whose tool span had ended by then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.shapes import anthropic, openai_chat, openai_responses, strands
from otel_agent_trace.session_format.shapes.neutral import is_result, result_ids, tool_calls
from otel_agent_trace.session_format.shapes.text import result_text

from ..formats.records import Event
from ..replay.timeline import resolve_id

if TYPE_CHECKING:
    from .session import Session

_DIGEST_KEYS = ("content_chars", "content_sha256")
_RUN_OPS = ("invoke_agent", "invoke_workflow")


def plain(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in _DIGEST_KEYS}


def _committed_by(events: list[Event]) -> dict[int, int]:
    """Message entries written as one batch at the end of a model call (its input the recorder had
    not seen, and its output) and taken in by the automatic snapshot right after them: index of
    such a message -> index of that snapshot. Until the snapshot, the batch is not yet the
    conversation (an input re-serialised by the SDK would otherwise appear twice)."""
    out: dict[int, int] = {}
    run: list[int] = []
    for i, event in enumerate(events):
        if event.type == fmt.MESSAGE:
            run.append(i)
            continue
        if event.type == fmt.SNAPSHOT and event.data.get("auto") and run:
            out.update(dict.fromkeys(run, i))
        run = []
    return out


@dataclass
class _ToolResult:
    call_id: str | None
    name: str | None
    arguments: Any
    result: Any
    error: str | None


def _tool_results(events: list[Event]) -> list[_ToolResult]:
    """The tool calls that ended among ``events``, in the order they ended; a tool span inside
    another tool span (``@oat.tool`` under a framework's tool) is left to the outer one."""
    starts: dict[str | None, dict[str, Any]] = {}  # by span id (as the file has it: maybe none)
    tool_spans: set[str | None] = set()
    out: list[_ToolResult] = []
    for event in events:
        if event.type not in (fmt.SPAN_START, fmt.SPAN_END):
            continue
        d = event.data
        span_id = d.get("span_id")
        attrs: dict[str, Any] = {**starts.get(span_id, {}), **(d.get("attributes") or {})}
        is_tool = attrs.get("gen_ai.operation.name") == "execute_tool" or str(d.get("name") or "").startswith(
            "execute_tool "
        )
        if event.type == fmt.SPAN_START:
            starts[span_id] = attrs
            if is_tool:
                tool_spans.add(span_id)
            continue
        if not is_tool:
            continue
        tool_spans.add(span_id)
        content: dict[str, Any] = d.get("content") or {}
        status: dict[str, Any] = d.get("status") or {}
        error = None
        if status.get("code") == fmt.STATUS_ERROR:
            error = str(status.get("description") or "error")
        elif "tool_result" not in content:
            continue  # no result recorded: nothing to give the model
        call_id = attrs.get("gen_ai.tool.call.id")
        if not call_id and d.get("parent_span_id") in tool_spans:
            continue
        out.append(
            _ToolResult(
                call_id if isinstance(call_id, str) and call_id else None,
                attrs.get("gen_ai.tool.name"),
                content.get("tool_arguments"),
                content.get("tool_result"),
                error,
            )
        )
    return out


def _result_message(call: dict[str, Any], shape_of: dict[str, Any], found: _ToolResult) -> dict[str, Any]:
    """The result of ``call`` in the shape of the message that made it (Responses items,
    Strands, Anthropic, else OpenAI chat / LangChain)."""
    value = found.error if found.error is not None else found.result
    text = result_text(value)
    if openai_responses.is_call(shape_of):
        return openai_responses.tool_result(call, text)
    if strands.makes_calls(shape_of):
        return strands.tool_result(call, value, text, found.error is not None)
    if anthropic.makes_calls(shape_of):
        return anthropic.tool_result(call, text, found.error is not None)
    return openai_chat.tool_result(call, text)


def _add_tool_results(messages: list[dict[str, Any]], results: list[_ToolResult]) -> list[dict[str, Any]]:
    """Each tool call of ``messages`` without its result, given the result its tool span recorded
    (by call id; a span without one by tool name and arguments), right after the results the call's
    message already has."""
    answered = {i for m in messages for i in result_ids(m)}
    by_id = {r.call_id: r for r in results if r.call_id}
    loose = [r for r in results if not r.call_id]
    adds: list[tuple[int, list[dict[str, Any]]]] = []
    for index, message in enumerate(messages):
        new: list[dict[str, Any]] = []
        for call in tool_calls(message):
            if call.get("id") in answered or not call.get("id"):
                continue
            found = by_id.get(call["id"])
            if found is None:
                found = next(
                    (r for r in loose if r.name == call.get("name") and r.arguments == call.get("arguments")),
                    None,
                )
                if found is not None:
                    loose.remove(found)
            if found is not None:
                new.append(_result_message(call, message, found))
                answered.add(call["id"])
        if new:
            adds.append((index, new))
    out = list(messages)
    for index, new in reversed(adds):
        at = index + 1
        while at < len(out) and is_result(out[at]):
            at += 1
        for message in new:
            before = out[at - 1] if at - 1 > index else None
            if (
                before is not None
                and message.get("role") == "user"
                and before.get("role") == "user"
                and isinstance(before.get("content"), list)
            ):
                out[at - 1] = {**before, "content": [*before["content"], *message["content"]]}
            else:
                out.insert(at, message)
                at += 1
    return out


def conversation_at(session: Session, until: str | None) -> tuple[list[dict[str, Any]], int]:
    """The conversation at entry ``until`` (see :func:`rebuild_context`) and that entry's index."""
    events = session.events
    stop = resolve_id([e.id for e in events], until) if until else None
    window_start = 0
    end = len(events)
    for i, event in enumerate(events):
        d = event.data
        if event.type == fmt.SPAN_START and not d.get("parent_span_id"):
            attributes: dict[str, Any] = d.get("attributes") or {}
            op = attributes.get("gen_ai.operation.name")
            if op in _RUN_OPS:
                window_start = i
        if event.id == stop:
            end = i + 1
            break
    committed = _committed_by(events)
    ids: list[str] = []
    for i in range(window_start, end):
        event = events[i]
        d = event.data
        if event.type == fmt.SPAN_END and "input_message_ids" in (d.get("content") or {}):
            content = d["content"]
            ids = list(content.get("input_message_ids") or []) + list(content.get("output_message_ids") or [])
        elif event.type == fmt.SNAPSHOT and isinstance(d.get("message_ids"), list):
            ids = [i for i in d["message_ids"] if isinstance(i, str)]
        elif event.type == fmt.MESSAGE and event.id not in ids and committed.get(i, -1) < end:
            ids.append(event.id)
    by_id = {e.id: e for e in events[:end]}  # (a later run's snapshot names the earlier run's messages)
    messages = [plain(fmt.message_view(by_id[i].data if i in by_id else None, i)) for i in ids]
    return _add_tool_results(messages, _tool_results(events[window_start:end])), end - 1


def rebuild_context(session: Session, *, until: str | None = None) -> list[dict[str, Any]]:
    """The conversation as it stood at entry ``until`` (an id or unique prefix; default: the end).

    The window is the latest run at or before that entry (a top-level ``invoke_agent`` span starts
    a run: several runs in one file are separate windows). Within it, the last model call's input
    and output or the last snapshot, whichever came later, then messages recorded after it (the
    messages a model call wrote at its end count from the snapshot taken after it), and the result
    of every tool call that had ended by then (from its tool span) when no message holds it yet.
    A model's tool call whose tool had not returned yet is in it, without a result: that is how the
    conversation stood (:func:`resumable_context` cuts it off)."""
    return conversation_at(session, until)[0]
