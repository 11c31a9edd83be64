"""Resume a recorded conversation: rebuild it as it stood at any entry, and put a snapshot's
messages back into an agent — Strands / DevDuck agents (``agent.messages``), a LangGraph graph's
state, the OpenAI Agents SDK's input items, or a plain OpenAI- or Anthropic-format message list.

Third-party libraries are imported only when an agent of theirs is given. Nothing from the file
chooses code to import or a directory to change to: the agent comes from the caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from otel_agent_trace import session_format as fmt

from .replay.timeline import resolve_id

_DIGEST_KEYS = ("content_chars", "content_sha256")
_RUN_OPS = ("invoke_agent", "invoke_workflow")


class ResumeError(ValueError):
    """The session cannot be resumed as asked (trace tier, no such snapshot, unknown agent)."""


@dataclass
class Restored:
    """What was restored, from where, and into what."""

    source_session: str
    snapshot_id: int | None
    entry_id: str
    messages: list[dict[str, Any]]  # the recorded conversation
    # strands | langgraph | openai_agents | openai_messages | anthropic_messages | callable | none
    target: str
    restored: Any  # what was put in: the message list, the graph state, the input items
    system_prompt: Any = None
    last_query: Any = None
    cwd: str | None = None
    config: dict[str, Any] | None = None  # a LangGraph thread the state was written to
    result: Any = None  # resume_and_continue: what the agent returned
    answer: str | None = None  # ... and its text


# --- the conversation at an entry ----------------------------------------------------------------


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in _DIGEST_KEYS}


def rebuild_context(session: Any, *, until: str | None = None) -> list[dict[str, Any]]:
    """The conversation as it stood at entry ``until`` (an id or unique prefix; default: the end).

    The window is the latest run at or before that entry (a top-level ``invoke_agent`` span starts
    a run: several runs in one file are separate windows). Within it, the last model call's input
    and output or the last snapshot, whichever came later, then messages recorded after it."""
    events = session.events
    stop = resolve_id([e.id for e in events], until) if until else None
    window_start = 0
    for i, event in enumerate(events):
        d = event.data
        if event.type == fmt.SPAN_START and not d.get("parent_span_id"):
            op = (d.get("attributes") or {}).get("gen_ai.operation.name")
            if op in _RUN_OPS:
                window_start = i
        if event.id == stop:
            end = i + 1
            break
    else:
        end = len(events)
    ids: list[str] = []
    for event in events[window_start:end]:
        d = event.data
        if event.type == fmt.SPAN_END and "input_message_ids" in (d.get("content") or {}):
            content = d["content"]
            ids = list(content.get("input_message_ids") or []) + list(content.get("output_message_ids") or [])
        elif event.type == fmt.SNAPSHOT and isinstance(d.get("message_ids"), list):
            ids = [i for i in d["message_ids"] if isinstance(i, str)]
        elif event.type == fmt.MESSAGE and event.id not in ids:
            ids.append(event.id)
    by_id = {e.id: e for e in events}
    return [_plain(fmt.message_view(by_id[i].data if i in by_id else None, i)) for i in ids]


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
    if session.tier != "checkpoint":
        raise ResumeError(
            f"{session.path}: a {session.tier}-tier recording keeps message text only as hashes; "
            "resume needs the checkpoint tier (record with AGENT_TRACE_TIER=checkpoint or both)"
        )
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
    if isinstance(getattr(agent, "messages", None), list):
        return "strands"  # an agent object that keeps its conversation in .messages (DevDuck's wrapper too)
    if callable(agent):
        return "callable"
    raise ResumeError(f"cannot restore into {type(agent).__name__}: not a known agent, graph or message list")


def _provider(session: Any, snapshot: Any) -> str:
    info = snapshot.data.get("model_info") or {}
    return str(info.get("provider") or "") if isinstance(info, dict) else ""


def resume_from_snapshot(
    session: Any, n: int | None = None, *, agent: Any = None, at: str | None = None
) -> Restored:
    """Restore snapshot ``n`` (1-based; ``None``: the latest; or the latest at/before entry ``at``)
    into ``agent`` and return what was restored. With no agent, the messages are returned only."""
    snap = find_snapshot(session, n, at=at)
    messages = snapshot_messages(session, snap)
    kind = kind_of(agent)
    restored: Any = messages
    config = None
    target = kind
    if kind == "list":
        anthropic = _provider(session, snap) == "anthropic" or any(
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
            config = {"configurable": {"thread_id": f"resume-{session.session_id}-{snap.id}"}}
            agent.update_state(config, restored)
    elif kind == "openai_agents":
        restored = to_agents_input(_without_system(messages))
    elif kind == "callable":
        restored = to_openai(messages)
    return Restored(
        source_session=session.session_id,
        snapshot_id=snap.data.get("snapshot_id"),
        entry_id=snap.id,
        messages=messages,
        target=target,
        restored=restored,
        system_prompt=snap.data.get("system_prompt"),
        last_query=snap.data.get("last_query"),
        cwd=snap.data.get("cwd"),
        config=config,
    )


def _answer_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict) and isinstance(result.get("messages"), list) and result["messages"]:
        last = result["messages"][-1]
        return _text(getattr(last, "content", last.get("content") if isinstance(last, dict) else last))
    final = getattr(result, "final_output", None)
    if final is not None:
        return str(final)
    return str(result)


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
    elif kind == "callable":
        result = agent([*restored.restored, {"role": "user", "content": new_query}])
    else:
        raise ResumeError("resume_and_continue needs an agent")
    restored.result = result
    restored.answer = _answer_text(result)
    return restored
