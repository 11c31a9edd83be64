"""Each SDK's message objects, for the agents that take objects rather than dicts (LangChain,
Pydantic AI, smolagents, LlamaIndex, AutoGen, Google ADK, Agno): built from the neutral form
(:mod:`otel_agent_trace.session_format.shapes.neutral`) the recorded messages are read into.

Each function imports its SDK when called (only when an agent of it is given), so they are kept
here rather than with the dict shapes in ``session_format/shapes/``, which imports no SDK and is
type-checked strictly against SDKs the main environment does not all install. Those it does not
install (LlamaIndex, AutoGen, Google's) are imported with :func:`~importlib.import_module`: their
names are ``Any`` to the type checker, which cannot see them.
"""

from __future__ import annotations

import json
from importlib import import_module
from typing import Any

from otel_agent_trace.session_format.shapes import openai_chat
from otel_agent_trace.session_format.shapes.neutral import neutral


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
            calls: list[dict[str, Any]] = [
                {"id": c["id"], "name": c["name"], "args": c["arguments"] or {}}
                for c in m.get("tool_calls") or ()
            ]
            kw = {"name": m["name"]} if m.get("name") else {}
            out.append(AIMessage(content=text, tool_calls=calls, **kw))
    return out


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
            call_id: Any = m.get("tool_call_id")  # (as recorded: a result with no id keeps none)
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
    from smolagents.memory import ToolCall  # pyright: ignore[reportMissingTypeStubs]
    from smolagents.models import ChatMessage, MessageRole  # pyright: ignore[reportMissingTypeStubs]

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
            calls: list[dict[str, Any]] = [
                ToolCall(c["name"], c["arguments"], c["id"]).dict() for c in m.get("tool_calls") or ()
            ]
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
    ChatMessage = import_module("llama_index.core.llms").ChatMessage

    out: list[Any] = []
    for m in neutral(messages):
        extra: dict[str, Any] = {}
        if m["role"] == "tool":
            extra = {"tool_call_id": m.get("tool_call_id")}
            if m.get("name"):
                extra["name"] = m["name"]
        elif m.get("tool_calls"):
            extra["tool_calls"] = openai_chat.from_recorded([m])[0]["tool_calls"]
        out.append(ChatMessage(role=m["role"], content=m["content"] or None, additional_kwargs=extra))
    return out


def to_autogen(messages: list[dict[str, Any]], source: str = "assistant") -> list[Any]:
    """AutoGen ``LLMMessage`` s (an ``AssistantAgent``'s model context; imports ``autogen_core``):
    a model's tool calls as ``FunctionCall`` s, the results after them as one
    ``FunctionExecutionResultMessage``."""
    core = import_module("autogen_core")
    models = import_module("autogen_core.models")

    out: list[Any] = []
    names: dict[Any, str] = {}
    for m in neutral(messages):
        role, text = m["role"], m["content"]
        if role == "system":
            out.append(models.SystemMessage(content=text))
        elif role == "user":
            out.append(models.UserMessage(content=text, source=m.get("name") or "user"))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            result = models.FunctionExecutionResult(
                content=text, name=m.get("name") or names.get(call_id, "tool"), call_id=call_id
            )
            if out and isinstance(out[-1], models.FunctionExecutionResultMessage):
                out[-1].content.append(result)
            else:
                out.append(models.FunctionExecutionResultMessage(content=[result]))
        elif m.get("tool_calls"):
            calls: list[Any] = []
            for c in m["tool_calls"]:
                names[str(c["id"])] = c["name"]
                calls.append(
                    core.FunctionCall(id=str(c["id"]), arguments=json.dumps(c["arguments"]), name=c["name"])
                )
            out.append(models.AssistantMessage(content=calls, thought=text or None, source=source))
        else:
            out.append(models.AssistantMessage(content=text, source=source))
    return out


def to_agno(messages: list[dict[str, Any]]) -> list[Any]:
    """Agno ``Message`` s (a run's input list; imports ``agno.models.message``): a model's tool
    calls in the OpenAI chat shape Agno keeps them in, each result a ``tool`` message with its
    call id and its tool's name."""
    Message = import_module("agno.models.message").Message

    out: list[Any] = []
    names: dict[Any, str] = {}
    for m in neutral(messages):
        role, text = m["role"], m["content"]
        if role == "tool":
            call_id = m.get("tool_call_id")
            name = m.get("name") or names.get(call_id)
            out.append(Message(role="tool", content=text, tool_call_id=call_id, tool_name=name))
        elif role == "assistant" and m.get("tool_calls"):
            names.update((c["id"], c["name"]) for c in m["tool_calls"])
            calls = openai_chat.from_recorded([m])[0]["tool_calls"]
            out.append(Message(role="assistant", content=text, tool_calls=calls))
        else:
            out.append(Message(role=role, content=text))
    return out


def to_adk(messages: list[dict[str, Any]]) -> list[Any]:
    """Google ADK session contents (``google.genai.types.Content``; imports ``google.genai``):
    a model's tool calls as ``function_call`` parts, their results as ``function_response`` parts
    of a user turn, with the calls' ids."""
    types = import_module("google.genai.types")

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


def smolagents_memory(messages: list[Any]) -> Any:
    """A smolagents memory step that gives the agent ``messages`` as they were."""
    from dataclasses import dataclass, field

    from smolagents.memory import MemoryStep  # pyright: ignore[reportMissingTypeStubs]

    @dataclass
    class RestoredConversation(MemoryStep):
        """A conversation restored by otel-agent-trace: its messages as recorded."""

        messages: list[Any] = field(default_factory=list[Any])

        def to_messages(self, summary_mode: bool = False) -> list[Any]:
            return list(self.messages)

    return RestoredConversation(messages)
