"""Restoring a conversation into an agent: which kind of agent it is (by its type's module: no
library is imported to tell), and the conversation in the shape that kind takes, put where it
keeps it (``agent.messages``, a LangGraph thread's state, a smolagents memory, an AutoGen model
context) or returned to be handed to its next run (Agno's run input)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from otel_agent_trace.session_format.shapes import anthropic, openai_chat, openai_responses, strands

from ..jsonvalue import JSONValue
from .autogen_team import into_team, team_record
from .conversation import plain
from .errors import ResumeError
from .history import resumable_context, valid_history
from .sdk_objects import (
    smolagents_memory,
    to_adk,
    to_agno,
    to_autogen,
    to_langchain,
    to_llamaindex,
    to_pydantic_ai,
    to_smolagents,
)
from .snapshots import find_snapshot, held_snapshot, latest_snapshot_at

if TYPE_CHECKING:
    from .session import Session


@dataclass
class Restored:
    """What was restored, from where, and into what."""

    source_session: str
    snapshot_id: int | None
    entry_id: str
    messages: list[dict[str, Any]]  # the recorded conversation
    # strands | langgraph | openai_agents | pydantic_ai | smolagents | llamaindex | autogen
    # | autogen_team | crewai | google_adk | agno | openai_messages | anthropic_messages | callable | none
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


def _without_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An agent object brings its own instructions: a leading system message is its prompt (or a
    ``developer`` one: the system role as OpenAI's newer models take it, and Agno sends it)."""
    i = 0
    while i < len(messages) and messages[i].get("role") in ("system", "developer"):
        i += 1
    return messages[i:]


def _without_crewai_prompt(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`_without_system`, and the prompt as CrewAI's OpenAI provider sends it to a model
    with no system role (an ``o1`` model): a leading user message ``System: …``. The agent's
    ``kickoff`` writes its prompt again."""
    rest = _without_system(messages)
    if rest and rest[0].get("role") == "user":
        content = rest[0].get("content")
        if isinstance(content, str) and content.startswith("System: "):
            return rest[1:]
    return rest


async def _into_model_context(agent: Any, messages: list[Any]) -> None:
    context = agent.model_context
    await context.clear()
    for message in messages:
        await context.add_message(message)


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
    if module.startswith("autogen_agentchat.teams") and hasattr(agent, "load_state"):
        return "autogen_team"
    if module.startswith("crewai") and hasattr(agent, "kickoff") and hasattr(agent, "role"):
        return "crewai"
    if module.startswith("google.adk") and hasattr(agent, "sub_agents"):
        return "google_adk"
    if module.startswith("agno") and hasattr(agent, "arun"):
        return "agno"
    if isinstance(getattr(agent, "messages", None), list):
        return "strands"  # an agent object that keeps its conversation in .messages (DevDuck's wrapper too)
    if callable(agent):
        return "callable"
    raise ResumeError(f"cannot restore into {type(agent).__name__}: not a known agent, graph or message list")


def _provider(snapshot: dict[str, Any]) -> str:
    info: JSONValue = snapshot.get("model_info") or {}
    return str(info.get("provider") or "") if isinstance(info, dict) else ""


def _into_autogen_team(session: Session, team: Any, entry_id: str, data: dict[str, Any]) -> Restored:
    """An AutoGen team: its thread, its agents' model contexts and buffers, from the team's
    recorded runs ended by ``entry_id`` (:mod:`.autogen_team`), put in through its state API."""
    record = team_record(session, entry_id)
    state = asyncio.run(into_team(team, record))
    return Restored(
        source_session=session.session_id,
        snapshot_id=data.get("snapshot_id"),
        entry_id=record.entry_id,
        messages=record.neutral(),
        target="autogen_team",
        restored=state,
        last_query=data.get("last_query"),
        cwd=data.get("cwd"),
    )


def resume_from_snapshot(
    session: Session, n: int | None = None, *, agent: Any = None, at: str | None = None
) -> Restored:
    """Restore the conversation into ``agent`` and return what was restored: as it stood at
    snapshot ``n`` (1-based; ``None``: the latest; negative: from the end), or at any entry ``at``
    (an id or unique prefix) — with the tool results recorded by then, cut back to the last complete
    turn where a tool call has no result yet (``Restored.cut`` says so). With no agent, the
    messages are returned only."""
    data: dict[str, Any]
    if session.format.SNAPSHOTS_HOLD_CONVERSATION:
        data, entry_id = held_snapshot(session, n, at)
        held: list[dict[str, Any]] = data.get("agent_messages") or []
        context = valid_history([plain(m) for m in held], entry_id)
    elif at is not None:
        context = resumable_context(session, at)
        snap = latest_snapshot_at(session, context.entry_id)
        data = snap.data if snap is not None else {}
    else:
        data = find_snapshot(session, n).data
        context = resumable_context(session, data["id"])
    messages = context.messages
    kind = kind_of(agent)
    if kind == "autogen_team":
        return _into_autogen_team(session, agent, context.entry_id, data)
    if not any(m.get("role") != "system" for m in messages):
        raise ResumeError(
            f"{session.path}: no conversation at {context.entry_id} to resume"
            + (f" ({context.cut})" if context.cut else "")
        )
    restored: Any = messages
    config = None
    target = kind
    if kind == "list":
        as_anthropic = _provider(data) == "anthropic" or any(anthropic.makes_calls(m) for m in messages)
        restored = anthropic.from_recorded(messages) if as_anthropic else openai_chat.from_recorded(messages)
        agent[:] = restored
        target = "anthropic_messages" if as_anthropic else "openai_messages"
    elif kind == "strands":
        restored = strands.from_recorded(_without_system(messages))
        agent.messages = restored
    elif kind == "langgraph":
        restored = {"messages": to_langchain(_without_system(messages))}
        if getattr(agent, "checkpointer", None):
            config = {"configurable": {"thread_id": f"resume-{session.session_id}-{context.entry_id}"}}
            agent.update_state(config, restored)
    elif kind == "openai_agents":
        restored = openai_responses.from_recorded(_without_system(messages))
    elif kind == "pydantic_ai":
        restored = to_pydantic_ai(_without_system(messages))  # the agent brings its instructions
    elif kind == "smolagents":
        restored = to_smolagents(_without_system(messages))  # ... and its system prompt
        agent.memory.steps = [smolagents_memory(restored)]
    elif kind == "llamaindex":
        restored = to_llamaindex(_without_system(messages))  # the agent brings its system prompt
    elif kind == "autogen":
        restored = to_autogen(_without_system(messages), str(getattr(agent, "name", "assistant")))
        asyncio.run(_into_model_context(agent, restored))
    elif kind == "crewai":
        restored = openai_chat.from_recorded(
            _without_crewai_prompt(messages)
        )  # kickoff's messages; the agent's own prompt
    elif kind == "google_adk":
        restored = to_adk(_without_system(messages))  # a session's contents; the agent's instruction
    elif kind == "agno":
        restored = to_agno(_without_system(messages))  # its next run's input; the agent's instructions
    elif kind == "callable":
        restored = openai_chat.from_recorded(messages)
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
