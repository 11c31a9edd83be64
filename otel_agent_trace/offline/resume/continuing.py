"""Resume and continue: restore the conversation into an agent, ask it a new query, and say
what it answered (each framework's run called as that framework runs a turn)."""

from __future__ import annotations

import asyncio
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

from otel_agent_trace.session_format.shapes.text import flat_text

from .errors import ResumeError
from .restore import Restored, resume_from_snapshot

if TYPE_CHECKING:
    from .session import Session


async def _run_adk(agent: Any, history: list[Any], query: str) -> Any:
    """Run ``agent`` on a new in-memory ADK session holding ``history``, asked ``query``; its
    final response's text. (ADK is not in the main environment: imported untyped.)"""
    Event = import_module("google.adk.events").Event
    InMemoryRunner = import_module("google.adk.runners").InMemoryRunner
    types = import_module("google.genai.types")

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


def _graph_messages(result: Any) -> list[Any]:
    """The messages of a LangGraph state (a dict with a ``messages`` list), else none."""
    if isinstance(result, dict):
        messages = cast("dict[str, Any]", result).get("messages")
        if isinstance(messages, list):
            return cast("list[Any]", messages)
    return []


def _answer_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    graph_messages = _graph_messages(result)
    if graph_messages:
        last = graph_messages[-1]
        return flat_text(
            getattr(
                last,
                "content",
                cast("dict[str, Any]", last).get("content") if isinstance(last, dict) else last,
            )
        )
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
        return flat_text(getattr(cast("list[Any]", messages)[-1], "content", None))
    return str(result)


async def _run_llamaindex(agent: Any, query: str, history: list[Any]) -> Any:
    return await agent.run(user_msg=query, chat_history=history)


def resume_and_continue(
    session: Session, n: int | None, new_query: str, agent: Any, *, at: str | None = None
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
    elif kind in ("autogen", "autogen_team"):
        result = asyncio.run(agent.run(task=new_query))
    elif kind == "crewai":
        result = agent.kickoff([*restored.restored, {"role": "user", "content": new_query}])
    elif kind == "google_adk":
        result = asyncio.run(_run_adk(agent, restored.restored, new_query))
    elif kind == "agno":
        Message = import_module("agno.models.message").Message
        result = agent.run([*restored.restored, Message(role="user", content=new_query)])
    elif kind == "callable":
        result = agent([*restored.restored, {"role": "user", "content": new_query}])
    else:
        raise ResumeError("resume_and_continue needs an agent")
    restored.result = result
    # an Agno run's output: its content (its messages are the whole run's, the answer last)
    restored.answer = str(getattr(result, "content", None)) if kind == "agno" else _answer_text(result)
    return restored
