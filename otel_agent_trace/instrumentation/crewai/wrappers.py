"""CrewAI runs, agents and native tool calls.

* ``Crew.kickoff`` / ``akickoff``: ``invoke_workflow {crew name}``, current for the whole run.
* ``Agent.execute_task`` / ``aexecute_task`` (a crew's task) and ``Agent.kickoff`` /
  ``kickoff_async`` (an agent on its own): ``invoke_agent {role}``; the task's description or the
  messages as ``agent_input``, the result as ``agent_output``.
* a native tool call (``AgentExecutor._execute_single_native_tool_call`` and
  ``execute_single_native_tool_call``): ``execute_tool {name}`` with the model's call id; CrewAI
  turns a tool's exception into an ``Error executing tool: …`` result for the model: the span then
  has status ``ERROR``, ``error.type=tool_error``.
* a text-mode (ReAct) tool call, the path of a model without native function calling
  (``supports_function_calling()`` false, or a provider that refused the tools): the model writes
  ``Action: {tool}`` / ``Action Input: {json}``, CrewAI parses it into a ``ToolCalling`` and runs
  it through ``ToolUsage.use``: ``execute_tool {name}`` with the parsed arguments and the
  result the model gets as its ``Observation``, no call id (the model gave none); CrewAI's retries
  of a failing tool (``ToolUsage`` calls itself again) join that one span, and a failure CrewAI
  records (``ToolUsage.last_failure``: the tool raised, declared a ``ToolFailure``, spent its
  usage limit) gives it status ``ERROR``, ``error.type=tool_error``. ``ToolUsage.ause``: the
  same on CrewAI's native async path (``Crew.akickoff``, ``Agent.kickoff_async``). In a model
  replay (``tools="recorded"``) such a call is answered from the recording and the tool is not
  run: the recorded calls of that tool in order (the model wrote no call id). A native call is
  not answered: its tool runs.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call

_ERROR_PREFIX = "Error executing tool"
# CrewAI's native providers (by module) → the provider they call
_PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure.ai.openai",
    "bedrock": "aws.bedrock",
    "gemini": "gcp.gemini",
}


def _model(agent: Any) -> tuple[str | None, str | None]:
    llm = getattr(agent, "llm", None)
    if llm is None:
        return None, None
    module = type(llm).__module__
    provider = None
    if module.startswith("crewai.llms.providers."):
        provider = _PROVIDERS.get(module.split(".")[3])
    elif getattr(llm, "provider", None):
        provider = str(llm.provider)
    model = getattr(llm, "model", None)
    return provider, model if isinstance(model, str) else None


def _output(result: Any) -> Any:
    raw = getattr(result, "raw", None)
    return raw if isinstance(raw, str) else result if isinstance(result, str) else jsonable(result)


class _Span:
    """One span of ours, current while its call runs (:meth:`call` / :meth:`acall`)."""

    __slots__ = ("span",)

    def __init__(self, span: Any):
        self.span = span

    def _end(self, result: Any, error: BaseException | None) -> None:
        try:
            if error is not None:
                gs.record_error(self.span, error)
            elif sink.active() is not None:
                gs.record_content(self.span, agent_output=_output(result))
        finally:
            self.span.end()

    def call(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        try:
            with trace.use_span(
                self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                result = wrapped(*args, **kwargs)
        except BaseException as exc:
            never_raise("crewai span end")(self._end)(None, exc)
            raise
        if inspect.isawaitable(result):  # Agent.kickoff inside a Flow returns a coroutine
            return self._awaiting(result)
        never_raise("crewai span end")(self._end)(result, None)
        return result

    async def _awaiting(self, awaitable: Any) -> Any:
        try:
            with trace.use_span(
                self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                result = await awaitable
        except BaseException as exc:
            never_raise("crewai span end")(self._end)(None, exc)
            raise
        never_raise("crewai span end")(self._end)(result, None)
        return result

    async def acall(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        return await self._awaiting(wrapped(*args, **kwargs))


@never_raise("crewai crew start", default=None)
def _start_crew(crew: Any, kwargs: dict[str, Any], tracer: trace.Tracer) -> _Span | None:
    name = str(getattr(crew, "name", None) or "crew")
    span = tracer.start_span(
        f"{semconv.OP_INVOKE_WORKFLOW} {name}",
        attributes={semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_WORKFLOW, "gen_ai.workflow.name": name},
    )
    inputs = kwargs.get("inputs")
    if inputs and sink.active() is not None:
        gs.record_content(span, agent_input=jsonable(inputs))
    return _Span(span)


def _is_running(agent: Any) -> bool:
    """This agent's span is current already (``kickoff`` running a task, a nested call)."""
    current = trace.get_current_span()
    attrs = getattr(current, "attributes", None) or {}
    return (
        current.is_recording()
        and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT
        and attrs.get("gen_ai.agent.id") == str(getattr(agent, "id", ""))
    )


@never_raise("crewai agent start", default=None)
def _start_agent(agent: Any, agent_input: Any, tracer: trace.Tracer) -> _Span | None:
    if _is_running(agent):
        return None
    role = str(getattr(agent, "role", None) or "agent")
    provider, model = _model(agent)
    goal = getattr(agent, "goal", None)
    span = tracer.start_span(
        gs.agent_span_name(role),
        attributes=gs.agent_attributes(
            role,
            agent_id=str(getattr(agent, "id", "")) or None,
            description=goal if isinstance(goal, str) else None,
            provider=provider,
            model=model,
        ),
    )
    if agent_input is not None and sink.active() is not None:
        gs.record_content(span, agent_input=agent_input)
    return _Span(span)


def _task_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    task = kwargs.get("task", args[0] if args else None)
    description = getattr(task, "description", None)
    return description if isinstance(description, str) else None


def _messages_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    messages = kwargs.get("messages", args[0] if args else None)
    return messages if isinstance(messages, str) else jsonable(messages)


def crew_wrapper(tracer: Any) -> Any:
    def kickoff(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start_crew(instance, kwargs, tracer())
        return wrapped(*args, **kwargs) if state is None else state.call(wrapped, args, kwargs)

    return kickoff


def async_crew_wrapper(tracer: Any) -> Any:
    async def akickoff(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start_crew(instance, kwargs, tracer())
        return await wrapped(*args, **kwargs) if state is None else await state.acall(wrapped, args, kwargs)

    return akickoff


def _agent_wrapper(tracer: Any, read_input: Any) -> Any:
    def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start_agent(instance, read_input(args, kwargs), tracer())
        return wrapped(*args, **kwargs) if state is None else state.call(wrapped, args, kwargs)

    return run


def _async_agent_wrapper(tracer: Any, read_input: Any) -> Any:
    async def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start_agent(instance, read_input(args, kwargs), tracer())
        return await wrapped(*args, **kwargs) if state is None else await state.acall(wrapped, args, kwargs)

    return run


def task_wrapper(tracer: Any) -> Any:
    return _agent_wrapper(tracer, _task_input)


def async_task_wrapper(tracer: Any) -> Any:
    return _async_agent_wrapper(tracer, _task_input)


def kickoff_wrapper(tracer: Any) -> Any:
    return _agent_wrapper(tracer, _messages_input)


def async_kickoff_wrapper(tracer: Any) -> Any:
    return _async_agent_wrapper(tracer, _messages_input)


@never_raise("crewai tool start", default=None)
def _start_tool(tool_call: Any, tools: Any, tracer: trace.Tracer) -> Any:
    from crewai.utilities.agent_utils import extract_tool_call_info  # pyright: ignore[reportMissingImports]

    info = extract_tool_call_info(tool_call)
    if not info:
        return None
    call_id, name, arguments = info
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    tool = next((t for t in tools or () if getattr(t, "name", None) == name), None)
    return start_tool_call(
        str(name),
        tracer=tracer,
        call_id=str(call_id) if call_id else None,
        description=getattr(tool, "description", None),
        arguments=jsonable(arguments),
    )


def _outcome(result: Any) -> tuple[Any, str | None]:
    """The result the model gets, and ``tool_error`` when CrewAI made it of an exception."""
    value = result.get("result") if isinstance(result, dict) else getattr(result, "result", result)
    error = "tool_error" if isinstance(value, str) and value.startswith(_ERROR_PREFIX) else None
    return jsonable(value), error


def method_tool_call_wrapper(tracer: Any) -> Any:
    """``AgentExecutor._execute_single_native_tool_call(tool_call)``."""

    def execute(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        tool_call = kwargs.get("tool_call", args[0] if args else None)
        call = _start_tool(tool_call, getattr(instance, "original_tools", None), tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        return call.run(wrapped, args, kwargs, _outcome)

    return execute


def function_tool_call_wrapper(tracer: Any) -> Any:
    """``execute_single_native_tool_call(tool_call, *, original_tools, ...)``."""

    def execute(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        tool_call = kwargs.get("tool_call", args[0] if args else None)
        call = _start_tool(tool_call, kwargs.get("original_tools"), tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        return call.run(wrapped, args, kwargs, _outcome)

    return execute


def _text_tool(usage: Any, calling: Any) -> Any:
    """The tool a ``ToolCalling`` names, among the ``ToolUsage``'s tools (``None``: not one of them)."""
    from crewai.utilities.string_utils import sanitize_tool_name  # pyright: ignore[reportMissingImports]

    wanted = sanitize_tool_name(str(getattr(calling, "tool_name", "")))
    return next(
        (
            t
            for t in getattr(usage, "tools", None) or ()
            if sanitize_tool_name(str(getattr(t, "name", ""))) == wanted
        ),
        None,
    )


@never_raise("crewai text tool start", default=None)
def _start_text_tool(usage: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> Any:
    calling = kwargs.get("calling", args[0] if args else None)
    name = getattr(calling, "tool_name", None)
    if not isinstance(name, str) or not name:  # a ToolUsageError: CrewAI answers it without a tool
        return None
    tool = _text_tool(usage, calling)
    if tool is None:  # CrewAI answers an unknown tool with an error text, nothing runs
        return None
    return start_tool_call(
        str(getattr(tool, "name", None) or name),
        tracer=tracer,
        description=getattr(tool, "description", None),
        arguments=jsonable(getattr(calling, "arguments", None)),
    )


def _text_outcome(usage: Any) -> Any:
    def outcome(result: Any) -> tuple[Any, str | None]:
        return jsonable(result), "tool_error" if getattr(usage, "last_failure", None) is not None else None

    return outcome


def _answered_text(call: Any) -> tuple[bool, Any]:
    """In a model replay (``tools="recorded"``): ``(True, the recorded Observation)`` and the tool
    not run; the model wrote no call id, so the recorded calls of that tool are taken in order."""
    if _replay.player is None:
        return False, None
    name = (getattr(call.span, "attributes", None) or {}).get(semconv.GEN_AI_TOOL_NAME)
    found, result = _replay.answer_call(call, str(name))
    if not found:
        return False, None
    # ``use`` returns text (the Observation): a recorded value of another type as its JSON text
    return True, result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def text_tool_wrapper(tracer: Any) -> Any:
    """``ToolUsage.use(calling, tool_string)``: a tool call the model wrote as text."""

    def use(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start_text_tool(instance, args, kwargs, tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        found, result = _answered_text(call)
        if found:
            return result
        return call.run(wrapped, args, kwargs, _text_outcome(instance))

    return use


def async_text_tool_wrapper(tracer: Any) -> Any:
    """``ToolUsage.ause(calling, tool_string)``: the same on CrewAI's native async path
    (``Crew.akickoff``, ``Agent.kickoff_async``)."""

    async def ause(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start_text_tool(instance, args, kwargs, tracer())
        if call is None:
            return await wrapped(*args, **kwargs)
        found, result = _answered_text(call)
        if found:
            return result
        return await call.arun(wrapped, args, kwargs, _text_outcome(instance))

    return ause
