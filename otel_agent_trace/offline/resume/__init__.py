"""Resume a recorded conversation: rebuild it as it stood at any entry, and put a snapshot's
messages back into an agent — Strands / DevDuck agents (``agent.messages``), a LangGraph graph's
state, the OpenAI Agents SDK's input items, a Pydantic AI agent's ``message_history``, a smolagents
agent's memory, a LlamaIndex agent's ``chat_history``, an AutoGen ``AssistantAgent``'s model context
or an AutoGen team's state (:mod:`.autogen_team`), the messages of a CrewAI agent's ``kickoff``, a
Google ADK session's contents, an Agno agent's run input, or a plain OpenAI- or Anthropic-format
message list.

One concept a module: :mod:`.conversation` (the conversation at an entry), :mod:`.history` (cut
back to the last complete turn), :mod:`.snapshots` (finding one), :mod:`.restore` (into an agent
of each kind), :mod:`.continuing` (and asking it a new query), :mod:`.sdk_objects` (the SDKs'
message objects). Each SDK's dict shapes are in :mod:`otel_agent_trace.session_format.shapes`.

Third-party libraries are imported only when an agent of theirs is given. Nothing from the file
chooses code to import or a directory to change to: the agent comes from the caller.
"""

from __future__ import annotations

from otel_agent_trace.session_format.shapes.anthropic import from_recorded as to_anthropic
from otel_agent_trace.session_format.shapes.neutral import neutral
from otel_agent_trace.session_format.shapes.openai_chat import from_recorded as to_openai
from otel_agent_trace.session_format.shapes.openai_responses import from_recorded as to_agents_input
from otel_agent_trace.session_format.shapes.strands import from_recorded as to_strands

from .continuing import resume_and_continue
from .conversation import rebuild_context
from .errors import ResumeError
from .history import Context, resumable_context, valid_history
from .restore import Restored, kind_of, resume_from_snapshot
from .sdk_objects import (
    to_adk,
    to_agno,
    to_autogen,
    to_langchain,
    to_llamaindex,
    to_pydantic_ai,
    to_smolagents,
)
from .snapshots import find_snapshot, snapshot_messages

__all__ = [
    "Context",
    "Restored",
    "ResumeError",
    "find_snapshot",
    "kind_of",
    "neutral",
    "rebuild_context",
    "resumable_context",
    "resume_and_continue",
    "resume_from_snapshot",
    "snapshot_messages",
    "to_adk",
    "to_agno",
    "to_agents_input",
    "to_anthropic",
    "to_autogen",
    "to_langchain",
    "to_llamaindex",
    "to_openai",
    "to_pydantic_ai",
    "to_smolagents",
    "to_strands",
    "valid_history",
]
