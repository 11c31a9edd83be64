"""LlamaIndex agent runs and tool calls.

* ``run(...)`` (``BaseWorkflowAgent.run``, ``AgentWorkflow.run``) returns a ``WorkflowHandler`` at
  once and the workflow runs in asyncio tasks created during the call: the ``invoke_agent`` span is
  current while ``run`` is called (a task copies the context it is created in) and ends when the
  handler's result task is done (or, at the latest, when the handler is collected). A run that
  continues a running context (``ctx.is_running``) is part of the run that started it: no span.
* the ``call_tool`` step (its ``ToolCall`` event has the model's ``tool_id``): one
  ``execute_tool`` span; a tool's exception, which LlamaIndex hands to the model as an error
  output, sets status ``ERROR``. Under a model replay with ``--tools recorded`` the call is
  answered from the recording and the tool is not run.
* a model replay's stop (a divergence, a refusal) is a ``BaseException`` so that agents do not
  swallow it; the workflow runtime passes on only ``Exception`` s from a step and would wait
  forever: in the steps that call the model or a tool it becomes :class:`ModelReplayStopped`,
  which ends the run with it.
"""

from __future__ import annotations

import weakref
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call

# LlamaIndex LLM classes (by module) → the provider they call
_PROVIDERS = {
    "llama_index.llms.openai": "openai",
    "llama_index.llms.openai_like": "openai",
    "llama_index.llms.azure_openai": "azure.ai.openai",
    "llama_index.llms.anthropic": "anthropic",
    "llama_index.llms.bedrock_converse": "aws.bedrock",
    "llama_index.llms.google_genai": "gcp.gen_ai",
    "llama_index.llms.ollama": "ollama",
    "llama_index.llms.mistralai": "mistral_ai",
    "llama_index.llms.litellm": "litellm",
}


class ModelReplayStopped(Exception):
    """A model replay stopped this LlamaIndex run (the replay's report says why)."""


def model_step(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``run_agent_step``: a model replay's stop ends the run instead of hanging it."""
    return _stops_as_errors(wrapped(*args, **kwargs))


async def _stops_as_errors(step: Any) -> Any:
    try:
        return await step
    except _replay.ModelReplayStop as stop:
        raise ModelReplayStopped(str(stop)) from stop


class _Run:
    __slots__ = ("span", "ended")

    def __init__(self, span: Any):
        self.span = span
        self.ended = False

    def end(self, error: BaseException | None = None, output: Any = None, has_output: bool = False) -> None:
        if self.ended:
            return
        self.ended = True
        try:
            if error is not None:
                gs.record_error(self.span, error)
            elif has_output and sink.active() is not None:
                gs.record_content(self.span, agent_output=jsonable(output))
        finally:
            self.span.end()


def _agent_of(workflow: Any) -> Any:
    """The agent that starts the run: the agent itself, or a workflow's root agent."""
    agents = getattr(workflow, "agents", None)
    root = getattr(workflow, "root_agent", None)
    if isinstance(agents, dict) and root in agents:
        return agents[root]
    return workflow


def _model(agent: Any) -> tuple[str | None, str | None]:
    llm = getattr(agent, "llm", None)
    if llm is None:
        return None, None
    module = type(llm).__module__
    provider = next((p for prefix, p in _PROVIDERS.items() if module.startswith(prefix)), None)
    model = getattr(llm, "model", None)
    return provider, model if isinstance(model, str) else None


def _text(message: Any) -> Any:
    if isinstance(message, str):
        return message
    content = getattr(message, "content", None)
    return content if content is not None else jsonable(message)


def _continues_a_run(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    ctx = kwargs.get("ctx") or next((a for a in args if type(a).__name__ == "Context"), None)
    return bool(getattr(ctx, "is_running", False))


@never_raise("llamaindex run start", default=None)
def _start(workflow: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> _Run | None:
    if _continues_a_run(args, kwargs):
        return None
    agent = _agent_of(workflow)
    name = str(getattr(agent, "name", None) or type(workflow).__name__)
    description = getattr(agent, "description", None)
    provider, model = _model(agent)
    span = tracer.start_span(
        gs.agent_span_name(name),
        attributes=gs.agent_attributes(
            name,
            description=description if isinstance(description, str) else None,
            provider=provider,
            model=model,
        ),
    )
    user_msg = kwargs.get("user_msg", args[0] if args and type(args[0]).__name__ != "Context" else None)
    if user_msg is not None and sink.active() is not None:
        gs.record_content(span, agent_input=jsonable(_text(user_msg)))
    return _Run(span)


@never_raise("llamaindex run end")
def _when_done(state: _Run, handler: Any) -> None:
    weakref.finalize(handler, state.end)  # the last resort: never left open
    task = getattr(handler, "_result_task", None)
    if task is None or not hasattr(task, "add_done_callback"):
        state.end()
        return
    task.add_done_callback(lambda done: _done(state, done))


@never_raise("llamaindex run done")
def _done(state: _Run, task: Any) -> None:
    if task.cancelled():
        state.end()
        return
    error = task.exception()
    if error is not None:
        state.end(error=error)
        return
    result = getattr(task.result(), "result", None)  # the StopEvent's result: an AgentOutput
    state.end(output=_text(getattr(result, "response", result)), has_output=True)


def run_wrapper(tracer: Any) -> Any:
    """``run(...)``: the run's span, current while the workflow's tasks are created."""

    def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start(instance, args, kwargs, tracer())
        if state is None:
            return wrapped(*args, **kwargs)
        token = otel_context.attach(trace.set_span_in_context(state.span))
        try:
            handler = wrapped(*args, **kwargs)
        except BaseException as exc:
            state.end(error=exc)
            raise
        finally:
            otel_context.detach(token)
        _when_done(state, handler)
        return handler

    return run


@never_raise("llamaindex tool start", default=None)
def _start_tool(workflow: Any, event: Any, tracer: trace.Tracer) -> Any:
    return start_tool_call(
        str(getattr(event, "tool_name", None) or "tool"),
        tracer=tracer,
        call_id=getattr(event, "tool_id", None),
        arguments=jsonable(getattr(event, "tool_kwargs", None)),
    )


@never_raise("llamaindex tool description")
def _describe(call: Any, workflow: Any, name: str) -> None:
    for tool in getattr(workflow, "tools", None) or ():
        metadata = getattr(tool, "metadata", None)
        description = getattr(metadata, "description", None)
        if getattr(metadata, "name", None) == name and isinstance(description, str):
            call.span.set_attribute("gen_ai.tool.description", description[:1000])
            return


def _outcome(result: Any) -> tuple[Any, str | None]:
    """The tool's output, and ``tool_error`` when LlamaIndex turned an exception into it."""
    output = getattr(result, "tool_output", None)
    error = "tool_error" if getattr(output, "is_error", False) else None
    exception = getattr(output, "exception", None)
    if isinstance(exception, BaseException):
        error = type(exception).__qualname__
    return jsonable(getattr(output, "raw_output", getattr(output, "content", None))), error


def call_tool_wrapper(tracer: Any) -> Any:
    """The ``call_tool(ctx, ev)`` step: the tool call's span, with the model's call id."""

    async def call_tool(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        event = kwargs.get("ev", args[1] if len(args) > 1 else None)
        call = _start_tool(instance, event, tracer())
        if call is None:
            return await wrapped(*args, **kwargs)
        _describe(call, instance, str(getattr(event, "tool_name", "")))
        if _replay.player is not None:
            found, output = await _stops_as_errors(_answer(call, event))
            if found:
                ctx = kwargs.get("ctx", args[0] if args else None)
                return _recorded_result(ctx, event, output)
        return await _stops_as_errors(call.arun(wrapped, args, kwargs, _outcome))

    return call_tool


async def _answer(call: Any, event: Any) -> tuple[bool, Any]:
    return _replay.answer_call(call, str(event.tool_name), getattr(event, "tool_id", None))


def _recorded_result(ctx: Any, event: Any, output: Any) -> Any:
    """What the step returns and streams for a recorded output (the tool not run), as it would
    for the tool's own: the ``ToolCall`` and ``ToolCallResult`` events."""
    from llama_index.core.agent.workflow.workflow_events import ToolCall, ToolCallResult
    from llama_index.core.tools import ToolOutput

    stream = getattr(ctx, "write_event_to_stream", None)
    if stream is not None:
        stream(ToolCall(tool_name=event.tool_name, tool_kwargs=event.tool_kwargs, tool_id=event.tool_id))
    text = output if isinstance(output, str) else str(output)
    result = ToolOutput(
        content=text, tool_name=event.tool_name, raw_input=event.tool_kwargs, raw_output=output
    )
    done = ToolCallResult(
        tool_name=event.tool_name,
        tool_kwargs=event.tool_kwargs,
        tool_id=event.tool_id,
        tool_output=result,
        return_direct=False,
    )
    if stream is not None:
        stream(done)
    return done
