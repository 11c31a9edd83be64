"""Resume a recorded conversation: rebuild it as it stood at any entry, and put a snapshot's
messages back into an agent — Strands / DevDuck agents (``agent.messages``), a LangGraph graph's
state, the OpenAI Agents SDK's input items, a Pydantic AI agent's ``message_history``, a smolagents
agent's memory, a LlamaIndex agent's ``chat_history``, an AutoGen ``AssistantAgent``'s model context,
the messages of a CrewAI agent's ``kickoff``, a Google ADK session's contents, or a plain
OpenAI- or Anthropic-format message list.

Third-party libraries are imported only when an agent of theirs is given. Nothing from the file
chooses code to import or a directory to change to: the agent comes from the caller.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from otel_agent_trace import session_format as fmt

from .replay.timeline import resolve_id

_DIGEST_KEYS = ("content_chars", "content_sha256")
_RUN_OPS = ("invoke_agent", "invoke_workflow")
_NATIVE = "otel-agent-trace"  # our format's NAME (offline.formats.native)


class ResumeError(ValueError):
    """The session cannot be resumed as asked (trace tier, no such snapshot, unknown agent)."""


@dataclass
class Restored:
    """What was restored, from where, and into what."""

    source_session: str
    snapshot_id: int | None
    entry_id: str
    messages: list[dict[str, Any]]  # the recorded conversation
    # strands | langgraph | openai_agents | pydantic_ai | smolagents | llamaindex | autogen
    # | crewai | google_adk | openai_messages | anthropic_messages | callable | none
    target: str
    restored: Any  # what was put in: the message list, the graph state, the input items
    system_prompt: Any = None
    last_query: Any = None
    cwd: str | None = None
    config: dict[str, Any] | None = None  # a LangGraph thread the state was written to
    cut: str | None = None  # why the last messages were left out (a tool call with no result yet)
    result: Any = None  # resume_and_continue: what the agent returned
    answer: str | None = None  # ... and its text

    def __getitem__(self, key: str) -> Any:
        """DevDuck's result keys too: ``result["messages_restored"]``, ``result["agent_result"]``."""
        if key == "messages_restored":
            return len(self.messages)
        if key == "agent_result":
            return self.result
        if key in self.__dataclass_fields__:
            return getattr(self, key)
        raise KeyError(key)


# --- the conversation at an entry ----------------------------------------------------------------


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in _DIGEST_KEYS}


def _committed_by(events: list[Any]) -> dict[int, int]:
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


def _tool_results(events: list[Any]) -> list[_ToolResult]:
    """The tool calls that ended among ``events``, in the order they ended; a tool span inside
    another tool span (``@oat.tool`` under a framework's tool) is left to the outer one."""
    starts: dict[str, dict[str, Any]] = {}
    tool_spans: set[str] = set()
    out: list[_ToolResult] = []
    for event in events:
        if event.type not in (fmt.SPAN_START, fmt.SPAN_END):
            continue
        d = event.data
        span_id = d.get("span_id")
        attrs = {**starts.get(span_id, {}), **(d.get("attributes") or {})}
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
        content = d.get("content") or {}
        status = d.get("status") or {}
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


def _calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for m in neutral([message]) for c in m.get("tool_calls") or ()]


def _result_ids(message: dict[str, Any]) -> list[Any]:
    return [m.get("tool_call_id") for m in neutral([message]) if m["role"] == "tool"]


def _is_result(message: dict[str, Any]) -> bool:
    converted = neutral([message])
    return bool(converted) and all(m["role"] == "tool" for m in converted)


def _has_block(content: Any, test: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and test(b) for b in content)


def _result_message(call: dict[str, Any], shape_of: dict[str, Any], found: _ToolResult) -> dict[str, Any]:
    """The result of ``call`` in the shape of the message that made it (Strands, Anthropic,
    Responses items, OpenAI chat / LangChain)."""
    value = found.error if found.error is not None else found.result
    if isinstance(value, str):
        text = value
    else:
        text = _text(value) if isinstance(value, list) else json.dumps(value, ensure_ascii=False)
    content = shape_of.get("content")
    if shape_of.get("type") == "function_call":
        return {"type": "function_call_output", "call_id": call["id"], "output": text}
    if _has_block(content, lambda b: "toolUse" in b):
        blocks = value if isinstance(value, list) and all(isinstance(b, dict) for b in value) else None
        result = {
            "toolUseId": call["id"],
            "status": "error" if found.error is not None else "success",
            "content": blocks or [{"text": text}],
        }
        return {"role": "user", "content": [{"toolResult": result}]}
    if _has_block(content, lambda b: b.get("type") == "tool_use"):
        block = {"type": "tool_result", "tool_use_id": call["id"], "content": text}
        if found.error is not None:
            block["is_error"] = True
        return {"role": "user", "content": [block]}
    out = {"role": "tool", "tool_call_id": call["id"], "content": text}
    if call.get("name"):
        out["name"] = call["name"]
    return out


def _add_tool_results(messages: list[dict[str, Any]], results: list[_ToolResult]) -> list[dict[str, Any]]:
    """Each tool call of ``messages`` without its result, given the result its tool span recorded
    (by call id; a span without one by tool name and arguments), right after the results the call's
    message already has."""
    answered = {i for m in messages for i in _result_ids(m)}
    by_id = {r.call_id: r for r in results if r.call_id}
    loose = [r for r in results if not r.call_id]
    adds: list[tuple[int, list[dict[str, Any]]]] = []
    for index, message in enumerate(messages):
        new = []
        for call in _calls_of(message):
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
        while at < len(out) and _is_result(out[at]):
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


def _stood(session: Any, until: str | None) -> tuple[list[dict[str, Any]], int]:
    """The conversation at entry ``until`` (see :func:`rebuild_context`) and that entry's index."""
    events = session.events
    stop = resolve_id([e.id for e in events], until) if until else None
    window_start = 0
    end = len(events)
    for i, event in enumerate(events):
        d = event.data
        if event.type == fmt.SPAN_START and not d.get("parent_span_id"):
            op = (d.get("attributes") or {}).get("gen_ai.operation.name")
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
    messages = [_plain(fmt.message_view(by_id[i].data if i in by_id else None, i)) for i in ids]
    return _add_tool_results(messages, _tool_results(events[window_start:end])), end - 1


def rebuild_context(session: Any, *, until: str | None = None) -> list[dict[str, Any]]:
    """The conversation as it stood at entry ``until`` (an id or unique prefix; default: the end).

    The window is the latest run at or before that entry (a top-level ``invoke_agent`` span starts
    a run: several runs in one file are separate windows). Within it, the last model call's input
    and output or the last snapshot, whichever came later, then messages recorded after it (the
    messages a model call wrote at its end count from the snapshot taken after it), and the result
    of every tool call that had ended by then (from its tool span) when no message holds it yet.
    A model's tool call whose tool had not returned yet is in it, without a result: that is how the
    conversation stood (:func:`resumable_context` cuts it off)."""
    return _stood(session, until)[0]


@dataclass
class Context:
    """A conversation that can be handed to an agent: every tool call with its result."""

    messages: list[dict[str, Any]]
    entry_id: str
    cut: str | None = None  # why the messages after the last complete turn were left out
    dropped: int = 0


def _cut_point(messages: list[dict[str, Any]]) -> tuple[int, str] | None:
    """Where a history stops being valid for a framework: a message the file does not hold, a
    tool call with no result after it, a result for a call never made."""
    made: set[Any] = set()
    for index, message in enumerate(messages):
        if message.get("missing"):
            return index, f"message {message['missing']} is not in the file"
        for rid in _result_ids(message):
            if rid and rid not in made:
                return index, f"a tool result ({rid}) for a call made before this part of the recording"
        calls = _calls_of(message)
        if calls:
            later = {i for m in messages[index + 1 :] for i in _result_ids(m)}
            missing = [c for c in calls if not c.get("id") or c["id"] not in later]
            if missing:
                named = ", ".join(f"{c.get('name')} ({c.get('id')})" for c in missing)
                return index, f"the model's call of {named} has no result at this entry"
            made.update(c["id"] for c in calls)
    return None


def valid_history(messages: list[dict[str, Any]], entry_id: str = "") -> Context:
    """``messages`` cut back to the last complete turn: before the first model message whose tool
    calls have no result (an agent given it would fail, send the call unanswered or run the tool
    again), or the first message the file does not hold."""
    found = _cut_point(messages)
    if found is None:
        return Context(list(messages), entry_id)
    index, why = found
    kept = messages[:index]
    return Context(
        kept,
        entry_id,
        f"cut back to the last complete turn ({len(kept)} of {len(messages)} messages): {why}",
        len(messages) - index,
    )


def resumable_context(session: Any, at: str | None = None) -> Context:
    """The conversation at entry ``at`` (default: the end) as an agent can take it up: with the
    tool results recorded by then, cut back to the last complete turn where a call has none yet."""
    _check_tier(session)
    messages, index = _stood(session, at)
    return valid_history(messages, session.events[index].id)


def _check_tier(session: Any) -> None:
    if _is_native(session) and session.tier != "checkpoint":
        raise ResumeError(
            f"{session.path}: a {session.tier}-tier recording keeps message text only as hashes; "
            "resume needs the checkpoint tier (record with AGENT_TRACE_TIER=checkpoint or both)"
        )


# --- snapshots ----------------------------------------------------------------------------------


def _snapshot_entries(session: Any) -> list[Any]:
    return [e for e in session.events if e.type == fmt.SNAPSHOT]


def find_snapshot(session: Any, n: int | None = None, *, at: str | None = None) -> Any:
    """The snapshot entry numbered ``n`` (1-based; ``None``: the latest; negative: from the end), or
    the latest one at or before entry ``at``."""
    snaps = _snapshot_entries(session)
    if not snaps:
        raise ResumeError(f"{session.path}: no snapshots: nothing to resume from")
    if at is not None:
        point = resolve_id([e.id for e in session.events], at)
        best = None
        for event in session.events:
            if event.type == fmt.SNAPSHOT:
                best = event
            if event.id == point:
                break
        if best is None:
            raise ResumeError(f"{session.path}: no snapshot at or before {point}")
        return best
    if n is None:
        return snaps[-1]
    if n < 0:
        if -n > len(snaps):
            raise ResumeError(f"{session.path}: only {len(snaps)} snapshots")
        return snaps[n]
    for event in snaps:
        if event.data.get("snapshot_id") == n:
            return event
    have = ", ".join(str(e.data.get("snapshot_id")) for e in snaps)
    raise ResumeError(f"{session.path}: no snapshot {n} (snapshots: {have})")


def snapshot_messages(session: Any, snapshot: Any) -> list[dict[str, Any]]:
    """A snapshot's conversation; a :class:`ResumeError` when the file does not hold its text."""
    _check_tier(session)
    by_id = {e.id: e for e in session.events}
    out = []
    for mid in snapshot.data.get("message_ids") or []:
        event = by_id.get(mid)
        if event is None:
            raise ResumeError(f"{session.path}: message {mid} of snapshot {snapshot.id} is not in the file")
        out.append(_plain(fmt.message_view(event.data, mid)))
    return out


# --- message shapes -----------------------------------------------------------------------------


def _args(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value if value is not None else {}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict):
                if isinstance(p.get("text"), str):
                    parts.append(p["text"])
                elif isinstance(p.get("json"), (dict, list)):
                    parts.append(json.dumps(p["json"]))
        return "".join(parts)
    return "" if content is None else json.dumps(content)


def neutral(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages of any recorded shape (OpenAI chat, Anthropic, Strands, LangChain, Responses items)
    as ``{"role", "content", "tool_calls": [{"id","name","arguments"}], "tool_call_id", "name"}``."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role") or ("assistant" if m.get("type") == "function_call" else "user")
        if m.get("type") == "function_call":
            call = {"id": m.get("call_id"), "name": m.get("name"), "arguments": _args(m.get("arguments"))}
            out.append({"role": "assistant", "content": "", "tool_calls": [call]})
            continue
        if m.get("type") == "function_call_output":
            out.append({"role": "tool", "content": _text(m.get("output")), "tool_call_id": m.get("call_id")})
            continue
        content = m.get("content")
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        texts: list[str] = []
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    texts.append(str(block))
                elif "toolUse" in block:  # Strands
                    use = block["toolUse"]
                    calls.append(
                        {"id": use.get("toolUseId"), "name": use.get("name"), "arguments": use.get("input")}
                    )
                elif "toolResult" in block:
                    res = block["toolResult"]
                    results.append({"id": res.get("toolUseId"), "content": _text(res.get("content"))})
                elif block.get("type") == "tool_use":  # Anthropic
                    calls.append(
                        {"id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
                    )
                elif block.get("type") == "tool_result":
                    results.append({"id": block.get("tool_use_id"), "content": _text(block.get("content"))})
                elif isinstance(block.get("text"), str):
                    texts.append(block["text"])
        else:
            texts.append(_text(content))
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            calls.append(
                {
                    "id": call.get("id"),
                    "name": call.get("name") or fn.get("name"),
                    "arguments": _args(call.get("arguments", call.get("args", fn.get("arguments")))),
                }
            )
        if role == "tool":
            out.append(
                {
                    "role": "tool",
                    "content": "".join(texts),
                    "tool_call_id": m.get("tool_call_id"),
                    **({"name": m["name"]} if m.get("name") else {}),
                }
            )
            continue
        for res in results:
            out.append({"role": "tool", "content": res["content"], "tool_call_id": res["id"]})
        if texts or calls or not results:
            item: dict[str, Any] = {"role": role, "content": "".join(texts)}
            if calls:
                item["tool_calls"] = calls
            if m.get("name") and role != "tool":
                item["name"] = m["name"]
            out.append(item)
    return out


def to_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat-completions messages."""
    out = []
    for m in neutral(messages):
        if m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m.get("tool_call_id"), "content": m["content"]})
            continue
        item: dict[str, Any] = {"role": m["role"], "content": m["content"]}
        if m.get("tool_calls"):
            item["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in m["tool_calls"]
            ]
        out.append(item)
    return out


def to_anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic messages (system messages left out: Anthropic takes the system prompt apart)."""
    out: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": m["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if m["role"] == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m["content"] else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def to_strands(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strands messages (``content`` a list of blocks); messages already in that shape are kept."""
    if all(isinstance(m.get("content"), list) and m.get("role") in ("user", "assistant") for m in messages):
        return [dict(m) for m in messages]  # as recorded (Strands keeps metadata beside them)
    out: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {
                "toolResult": {
                    "toolUseId": m.get("tool_call_id"),
                    "status": "success",
                    "content": [{"text": m["content"]}],
                }
            }
            if out and out[-1]["role"] == "user" and all("toolResult" in b for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        blocks: list[dict[str, Any]] = [{"text": m["content"]}] if m["content"] else []
        blocks += [
            {"toolUse": {"toolUseId": c["id"], "name": c["name"], "input": c["arguments"]}}
            for c in m.get("tool_calls") or ()
        ]
        out.append({"role": m["role"], "content": blocks})
    return out


def to_langchain(messages: list[dict[str, Any]]) -> list[Any]:
    """LangChain message objects (imports ``langchain_core``)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for m in neutral(messages):
        role, text = m["role"], m["content"]
        if role == "system":
            out.append(SystemMessage(content=text))
        elif role == "user":
            out.append(HumanMessage(content=text))
        elif role == "tool":
            kw = {"name": m["name"]} if m.get("name") else {}
            out.append(ToolMessage(content=text, tool_call_id=m.get("tool_call_id") or "", **kw))
        else:
            calls = [
                {"id": c["id"], "name": c["name"], "args": c["arguments"] or {}}
                for c in m.get("tool_calls") or ()
            ]
            kw = {"name": m["name"]} if m.get("name") else {}
            out.append(AIMessage(content=text, tool_calls=calls, **kw))
    return out


def to_agents_input(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI Agents SDK (Responses) input items."""
    items: list[dict[str, Any]] = []
    for m in neutral(messages):
        if m["role"] == "tool":
            items.append(
                {"type": "function_call_output", "call_id": m.get("tool_call_id"), "output": m["content"]}
            )
            continue
        if m["content"] or not m.get("tool_calls"):
            items.append({"role": m["role"], "content": m["content"]})
        for c in m.get("tool_calls") or ():
            items.append(
                {
                    "type": "function_call",
                    "call_id": c["id"],
                    "name": c["name"],
                    "arguments": json.dumps(c["arguments"]),
                }
            )
    return items


def to_pydantic_ai(messages: list[dict[str, Any]]) -> list[Any]:
    """Pydantic AI ``ModelMessage`` s (a run's ``message_history``; imports ``pydantic_ai``): the
    user, system and tool-result messages between two answers make one ``ModelRequest``."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Any] = []
    parts: list[Any] = []
    names: dict[Any, str] = {}  # call id -> tool name (a result names its tool)
    for m in neutral(messages):
        role = m["role"]
        if role == "system":
            parts.append(SystemPromptPart(content=m["content"]))
        elif role == "user":
            parts.append(UserPromptPart(content=m["content"]))
        elif role == "tool":
            call_id = m.get("tool_call_id")
            name = m.get("name") or names.get(call_id) or "tool"
            parts.append(ToolReturnPart(tool_name=name, content=m["content"], tool_call_id=call_id))
        else:
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            answer: list[Any] = [TextPart(content=m["content"])] if m["content"] else []
            for c in m.get("tool_calls") or ():
                names[c["id"]] = c["name"]
                answer.append(
                    ToolCallPart(tool_name=c["name"], args=c["arguments"] or {}, tool_call_id=c["id"])
                )
            out.append(ModelResponse(parts=answer))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


def to_smolagents(messages: list[dict[str, Any]]) -> list[Any]:
    """smolagents ``ChatMessage`` s (imports ``smolagents``), as a ``ToolCallingAgent`` writes its
    memory: a model's tool calls as a ``tool-call`` message (``Calling tools:``), their results
    as a ``tool-response`` (``Observation:``)."""
    from smolagents.memory import ToolCall
    from smolagents.models import ChatMessage, MessageRole

    def message(role: Any, text: str) -> Any:
        return ChatMessage(role=role, content=[{"type": "text", "text": text}])

    out: list[Any] = []
    for m in neutral(messages):
        role = m["role"]
        if role == "tool":
            out.append(message(MessageRole.TOOL_RESPONSE, f"Observation:\n{m['content']}"))
        elif role == "assistant":
            if m["content"]:
                out.append(message(MessageRole.ASSISTANT, m["content"]))
            calls = [ToolCall(c["name"], c["arguments"], c["id"]).dict() for c in m.get("tool_calls") or ()]
            if calls:
                out.append(message(MessageRole.TOOL_CALL, "Calling tools:\n" + str(calls)))
        else:
            out.append(
                message(MessageRole(role) if role in ("user", "system") else MessageRole.USER, m["content"])
            )
    return out


def to_llamaindex(messages: list[dict[str, Any]]) -> list[Any]:
    """LlamaIndex ``ChatMessage`` s (a run's ``chat_history``; imports ``llama_index.core``): tool
    calls and results in ``additional_kwargs`` as its OpenAI LLM keeps them."""
    from llama_index.core.llms import ChatMessage

    out: list[Any] = []
    for m in neutral(messages):
        extra: dict[str, Any] = {}
        if m["role"] == "tool":
            extra = {"tool_call_id": m.get("tool_call_id")}
            if m.get("name"):
                extra["name"] = m["name"]
        elif m.get("tool_calls"):
            extra["tool_calls"] = to_openai([m])[0]["tool_calls"]
        out.append(ChatMessage(role=m["role"], content=m["content"] or None, additional_kwargs=extra))
    return out


def to_autogen(messages: list[dict[str, Any]], source: str = "assistant") -> list[Any]:
    """AutoGen ``LLMMessage`` s (an ``AssistantAgent``'s model context; imports ``autogen_core``):
    a model's tool calls as ``FunctionCall`` s, the results after them as one
    ``FunctionExecutionResultMessage``."""
    from autogen_core import FunctionCall
    from autogen_core.models import (
        AssistantMessage,
        FunctionExecutionResult,
        FunctionExecutionResultMessage,
        SystemMessage,
        UserMessage,
    )

    out: list[Any] = []
    names: dict[Any, str] = {}
    for m in neutral(messages):
        role, text = m["role"], m["content"]
        if role == "system":
            out.append(SystemMessage(content=text))
        elif role == "user":
            out.append(UserMessage(content=text, source=m.get("name") or "user"))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            result = FunctionExecutionResult(
                content=text, name=m.get("name") or names.get(call_id, "tool"), call_id=call_id
            )
            if out and isinstance(out[-1], FunctionExecutionResultMessage):
                out[-1].content.append(result)
            else:
                out.append(FunctionExecutionResultMessage(content=[result]))
        elif m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                names[str(c["id"])] = c["name"]
                calls.append(
                    FunctionCall(id=str(c["id"]), arguments=json.dumps(c["arguments"]), name=c["name"])
                )
            out.append(AssistantMessage(content=calls, thought=text or None, source=source))
        else:
            out.append(AssistantMessage(content=text, source=source))
    return out


async def _into_model_context(agent: Any, messages: list[Any]) -> None:
    context = agent.model_context
    await context.clear()
    for message in messages:
        await context.add_message(message)


def to_adk(messages: list[dict[str, Any]]) -> list[Any]:
    """Google ADK session contents (``google.genai.types.Content``; imports ``google.genai``):
    a model's tool calls as ``function_call`` parts, their results as ``function_response`` parts
    of a user turn, with the calls' ids."""
    from google.genai import types

    out: list[Any] = []
    names: dict[Any, str] = {}
    for m in neutral(messages):
        role, text = m["role"], m["content"]
        if role == "tool":
            call_id = m.get("tool_call_id")
            try:
                response = json.loads(text)
            except ValueError:
                response = None
            if not isinstance(response, dict):
                response = {"result": text}
            call = types.FunctionResponse(
                id=call_id, name=m.get("name") or names.get(call_id, "tool"), response=response
            )
            part = types.Part(function_response=call)
            if out and out[-1].role == "user" and all(p.function_response for p in out[-1].parts or ()):
                out[-1].parts.append(part)
            else:
                out.append(types.Content(role="user", parts=[part]))
            continue
        parts = [types.Part(text=text)] if text else []
        for c in m.get("tool_calls") or ():
            names[c["id"]] = c["name"]
            parts.append(
                types.Part(function_call=types.FunctionCall(id=c["id"], name=c["name"], args=c["arguments"]))
            )
        out.append(types.Content(role="model" if role == "assistant" else "user", parts=parts))
    return out


async def _run_adk(agent: Any, history: list[Any], query: str) -> Any:
    """Run ``agent`` on a new in-memory ADK session holding ``history``, asked ``query``; its
    final response's text."""
    from google.adk.events import Event
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=agent, app_name="resumed")
    session = await runner.session_service.create_session(app_name="resumed", user_id="user")
    for content in history:
        author = "user" if content.role == "user" else agent.name
        await runner.session_service.append_event(session, Event(author=author, content=content))
    answer = None
    message = types.Content(role="user", parts=[types.Part(text=query)])
    async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content is not None:
            answer = "".join(p.text or "" for p in event.content.parts or ())
    return answer


def _smolagents_memory(messages: list[Any]) -> Any:
    """A smolagents memory step that gives the agent ``messages`` as they were."""
    from dataclasses import dataclass, field

    from smolagents.memory import MemoryStep

    @dataclass
    class RestoredConversation(MemoryStep):
        """A conversation restored by otel-agent-trace: its messages as recorded."""

        messages: list[Any] = field(default_factory=list)

        def to_messages(self, summary_mode: bool = False) -> list[Any]:
            return list(self.messages)

    return RestoredConversation(messages)


def _without_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An agent object brings its own instructions: a leading system message is its prompt."""
    i = 0
    while i < len(messages) and messages[i].get("role") == "system":
        i += 1
    return messages[i:]


# --- agents -------------------------------------------------------------------------------------


def kind_of(agent: Any) -> str:
    """Which kind of target ``agent`` is (by its type's module: no library is imported here)."""
    if agent is None:
        return "none"
    if isinstance(agent, list):
        return "list"
    module = type(agent).__module__ or ""
    if module.startswith(("strands", "devduck")) and hasattr(agent, "messages"):
        return "strands"
    if module.startswith("langgraph"):
        return "langgraph"
    if module.startswith("agents") and type(agent).__name__ == "Agent":
        return "openai_agents"
    if module.startswith("pydantic_ai") and hasattr(agent, "run_sync"):
        return "pydantic_ai"
    if module.startswith("smolagents") and hasattr(agent, "memory"):
        return "smolagents"
    if module.startswith("llama_index") and hasattr(agent, "run"):
        return "llamaindex"
    if module.startswith("autogen_agentchat") and hasattr(agent, "model_context"):
        return "autogen"
    if module.startswith("crewai") and hasattr(agent, "kickoff") and hasattr(agent, "role"):
        return "crewai"
    if module.startswith("google.adk") and hasattr(agent, "sub_agents"):
        return "google_adk"
    if isinstance(getattr(agent, "messages", None), list):
        return "strands"  # an agent object that keeps its conversation in .messages (DevDuck's wrapper too)
    if callable(agent):
        return "callable"
    raise ResumeError(f"cannot restore into {type(agent).__name__}: not a known agent, graph or message list")


def _provider(snapshot: dict[str, Any]) -> str:
    info = snapshot.get("model_info") or {}
    return str(info.get("provider") or "") if isinstance(info, dict) else ""


def resume_from_snapshot(
    session: Any, n: int | None = None, *, agent: Any = None, at: str | None = None
) -> Restored:
    """Restore the conversation into ``agent`` and return what was restored: as it stood at
    snapshot ``n`` (1-based; ``None``: the latest; negative: from the end), or at any entry ``at``
    (an id or unique prefix) — with the tool results recorded by then, cut back to the last complete
    turn where a tool call has no result yet (``Restored.cut`` says so). With no agent, the
    messages are returned only."""
    if not _is_native(session):
        data, entry_id = _foreign_snapshot(session, n, at)
        context = valid_history([_plain(m) for m in data.get("agent_messages") or []], entry_id)
    elif at is not None:
        context = resumable_context(session, at)
        snap = _latest_snapshot_at(session, context.entry_id)
        data = snap.data if snap is not None else {}
    else:
        data = find_snapshot(session, n).data
        context = resumable_context(session, data["id"])
    messages = context.messages
    if not any(m.get("role") != "system" for m in messages):
        raise ResumeError(
            f"{session.path}: no conversation at {context.entry_id} to resume"
            + (f" ({context.cut})" if context.cut else "")
        )
    kind = kind_of(agent)
    restored: Any = messages
    config = None
    target = kind
    if kind == "list":
        anthropic = _provider(data) == "anthropic" or any(
            isinstance(m.get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in m["content"])
            for m in messages
        )
        restored = to_anthropic(messages) if anthropic else to_openai(messages)
        agent[:] = restored
        target = "anthropic_messages" if anthropic else "openai_messages"
    elif kind == "strands":
        restored = to_strands(_without_system(messages))
        agent.messages = restored
    elif kind == "langgraph":
        restored = {"messages": to_langchain(_without_system(messages))}
        if getattr(agent, "checkpointer", None):
            config = {"configurable": {"thread_id": f"resume-{session.session_id}-{context.entry_id}"}}
            agent.update_state(config, restored)
    elif kind == "openai_agents":
        restored = to_agents_input(_without_system(messages))
    elif kind == "pydantic_ai":
        restored = to_pydantic_ai(_without_system(messages))  # the agent brings its instructions
    elif kind == "smolagents":
        restored = to_smolagents(_without_system(messages))  # ... and its system prompt
        agent.memory.steps = [_smolagents_memory(restored)]
    elif kind == "llamaindex":
        restored = to_llamaindex(_without_system(messages))  # the agent brings its system prompt
    elif kind == "autogen":
        restored = to_autogen(_without_system(messages), str(getattr(agent, "name", "assistant")))
        asyncio.run(_into_model_context(agent, restored))
    elif kind == "crewai":
        restored = to_openai(_without_system(messages))  # kickoff's messages; the agent's own prompt
    elif kind == "google_adk":
        restored = to_adk(_without_system(messages))  # a session's contents; the agent's instruction
    elif kind == "callable":
        restored = to_openai(messages)
    return Restored(
        source_session=session.session_id,
        snapshot_id=data.get("snapshot_id"),
        entry_id=context.entry_id,
        messages=messages,
        target=target,
        restored=restored,
        system_prompt=data.get("system_prompt"),
        last_query=data.get("last_query"),
        cwd=data.get("cwd"),
        config=config,
        cut=context.cut,
    )


def _is_native(session: Any) -> bool:
    return getattr(getattr(session, "format", None), "NAME", _NATIVE) == _NATIVE


def _foreign_snapshot(session: Any, n: int | None, at: str | None) -> tuple[dict[str, Any], str]:
    """A snapshot of a DevDuck ZIP (``snapshots.json``, its messages whole) or a DM-Code-Agent
    file, as ``session.snapshots`` shows it, and the id of the entry that took it (``""`` if none)."""
    snaps = session.snapshots
    if not snaps:
        raise ResumeError(f"{session.path}: no snapshots: nothing to resume from")
    taken: dict[Any, str] = {}  # snapshot id -> the entry that took it
    best = None
    point = resolve_id([e.id for e in session.events], at) if at is not None else None
    for event in session.events:
        if event.type in session.format.SNAPSHOT_TYPES:
            own = event.data.get("snapshot_id")
            taken.setdefault(own if isinstance(own, int) else len(taken) + 1, event.id)
            best = own if isinstance(own, int) else len(taken)
        if event.id == point:
            break
    if point is not None:
        if best is None:
            raise ResumeError(f"{session.path}: no snapshot at or before {point}")
        n = best
    if n is None:
        snap = snaps[-1]
    elif n < 0:
        if -n > len(snaps):
            raise ResumeError(f"{session.path}: only {len(snaps)} snapshots")
        snap = snaps[n]
    else:
        found = [s for s in snaps if s.get("snapshot_id") == n]
        if not found:
            have = ", ".join(str(s.get("snapshot_id")) for s in snaps)
            raise ResumeError(f"{session.path}: no snapshot {n} (snapshots: {have})")
        snap = found[0]
    if not isinstance(snap.get("agent_messages"), list):
        raise ResumeError(f"{session.path}: snapshot {snap.get('snapshot_id')} holds no messages")
    return snap, taken.get(snap.get("snapshot_id"), "")


def _latest_snapshot_at(session: Any, entry_id: str) -> Any:
    best = None
    for event in session.events:
        if event.type == fmt.SNAPSHOT:
            best = event
        if event.id == entry_id:
            break
    return best


def _answer_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict) and isinstance(result.get("messages"), list) and result["messages"]:
        last = result["messages"][-1]
        return _text(getattr(last, "content", last.get("content") if isinstance(last, dict) else last))
    final = getattr(result, "final_output", None)
    if final is not None:
        return str(final)
    raw = getattr(result, "raw", None)  # CrewAI's output
    if isinstance(raw, str):
        return raw
    output = getattr(result, "output", None)  # Pydantic AI's run result
    if output is not None:
        return str(output)
    response = getattr(result, "response", None)  # LlamaIndex's AgentOutput
    if response is not None:
        return str(getattr(response, "content", response))
    messages = getattr(result, "messages", None)  # AutoGen's TaskResult
    if isinstance(messages, list) and messages:
        return _text(getattr(messages[-1], "content", None))
    return str(result)


async def _run_llamaindex(agent: Any, query: str, history: list[Any]) -> Any:
    return await agent.run(user_msg=query, chat_history=history)


def resume_and_continue(
    session: Any, n: int | None, new_query: str, agent: Any, *, at: str | None = None
) -> Restored:
    """Restore snapshot ``n`` into ``agent`` (see :func:`resume_from_snapshot`), then ask it
    ``new_query``. A plain callable is called with the restored OpenAI-format messages plus the
    query. Returns the :class:`Restored` with ``result`` and ``answer`` set."""
    if isinstance(agent, list):
        raise ResumeError("a message list cannot answer a query: pass an agent, a graph or a callable")
    restored = resume_from_snapshot(session, n, agent=agent, at=at)
    kind = restored.target
    if kind == "strands":
        result = agent(new_query)
    elif kind == "langgraph":
        from langchain_core.messages import HumanMessage

        if restored.config is not None:
            result = agent.invoke({"messages": [HumanMessage(content=new_query)]}, restored.config)
        else:
            result = agent.invoke(
                {"messages": [*restored.restored["messages"], HumanMessage(content=new_query)]}
            )
    elif kind == "openai_agents":
        from agents import Runner

        result = Runner.run_sync(agent, [*restored.restored, {"role": "user", "content": new_query}])
    elif kind == "pydantic_ai":
        result = agent.run_sync(new_query, message_history=restored.restored)
    elif kind == "smolagents":
        result = agent.run(new_query, reset=False)  # the restored memory, then the new task
    elif kind == "llamaindex":
        result = asyncio.run(_run_llamaindex(agent, new_query, restored.restored))
    elif kind == "autogen":
        result = asyncio.run(agent.run(task=new_query))
    elif kind == "crewai":
        result = agent.kickoff([*restored.restored, {"role": "user", "content": new_query}])
    elif kind == "google_adk":
        result = asyncio.run(_run_adk(agent, restored.restored, new_query))
    elif kind == "callable":
        result = agent([*restored.restored, {"role": "user", "content": new_query}])
    else:
        raise ResumeError("resume_and_continue needs an agent")
    restored.result = result
    restored.answer = _answer_text(result)
    return restored
