"""smolagents runs and tool calls.

* ``MultiStepAgent._run_stream``: the generator every run consumes (``run`` lists it; ``run(
  stream=True)`` returns it). The ``invoke_agent`` span starts at its first step and ends when it
  is exhausted, closed or fails; it is current only while a step runs (never across a ``yield``).
  The task is ``agent_input``, the ``FinalAnswerStep``'s output ``agent_output``.
* ``ToolCallingAgent.process_tool_calls`` knows the model's tool calls (with their ids);
  ``execute_tool_call(name, arguments)`` does not: the ids are handed over in a context variable
  (parallel calls run in copies of the context, so they see it too) and matched by name and
  arguments.
* ``Tool.__call__``: a tool called any other way (a ``CodeAgent``'s code) gets a span without a
  call id (code has none; none is made up); under ``execute_tool_call``'s span of the same tool
  it joins that span. Model-replayed, it is answered from the recording by name, in order.
"""

from __future__ import annotations

import contextvars
from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._genai.scoped import iterate_in_span
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call

# smolagents' model classes → the provider they call (``gen_ai.provider.name``)
_PROVIDERS = {
    "OpenAIModel": "openai",
    "OpenAIServerModel": "openai",
    "AzureOpenAIModel": "azure.ai.openai",
    "LiteLLMModel": "litellm",
    "LiteLLMRouterModel": "litellm",
    "InferenceClientModel": "huggingface",
    "AmazonBedrockModel": "aws.bedrock",
    "TransformersModel": "transformers",
    "VLLMModel": "vllm",
    "MLXModel": "mlx",
}
# the model's tool calls of the step being run: [(name, arguments, call id, taken)]
_PENDING: contextvars.ContextVar[list[list[Any]] | None] = contextvars.ContextVar(
    "agent_trace_smolagents_calls", default=None
)


class _Run:
    __slots__ = ("agent", "span", "output", "has_output")

    def __init__(self, agent: Any, span: Any):
        self.agent = agent
        self.span = span
        self.output: Any = None
        self.has_output = False


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)


@never_raise("smolagents run start", default=None)
def _start(agent: Any, task: Any, tracer: trace.Tracer) -> _Run | None:
    model = getattr(agent, "model", None)
    model_id = getattr(model, "model_id", None)
    description = getattr(agent, "description", None)
    span = tracer.start_span(
        gs.agent_span_name(_name(agent)),
        attributes=gs.agent_attributes(
            _name(agent),
            description=description if isinstance(description, str) else None,
            provider=_PROVIDERS.get(type(model).__name__),
            model=model_id if isinstance(model_id, str) else None,
        ),
    )
    if sink.active() is not None and isinstance(task, str):
        gs.record_content(span, agent_input=task)
    return _Run(agent, span)


@never_raise("smolagents run step")
def _observe(state: _Run, step: Any) -> None:
    if type(step).__name__ == "FinalAnswerStep":
        state.output, state.has_output = getattr(step, "output", None), True


@never_raise("smolagents run end")
def _end(state: _Run, error: BaseException | None, exhausted: bool) -> None:
    try:
        if error is not None:
            gs.record_error(state.span, error)
        elif state.has_output and sink.active() is not None:
            gs.record_content(state.span, agent_output=jsonable(state.output))
            _snapshot(state)
    finally:
        state.span.end()


@never_raise("smolagents run snapshot")
def _snapshot(state: _Run) -> None:
    """At the end of a run, the conversation as the agent's memory holds it (its last tool
    results too), in the chat shape its model is sent: what a resume takes up."""
    from smolagents.models import get_clean_message_list, tool_role_conversions

    rec = sink.active()
    agent = state.agent
    if rec is None:
        return
    messages = jsonable(get_clean_message_list(agent.write_memory_to_messages(), tool_role_conversions))
    if not isinstance(messages, list) or not messages:
        return
    system = messages[0].get("content") if messages[0].get("role") == "system" else None
    model = getattr(agent, "model", None)
    model_id = getattr(model, "model_id", None)
    info = {
        "type": type(model).__name__,
        "model_id": model_id if isinstance(model_id, str) else None,
        "provider": _PROVIDERS.get(type(model).__name__, "smolagents"),
    }
    mc.record_snapshot(
        rec,
        gs.agent_span_name(_name(agent)),
        messages,
        system,
        messages[:-1],
        messages[-1:],
        info,
        state.span,
        [str(n) for n in getattr(agent, "tools", None) or ()],
    )


def run_stream_wrapper(tracer: Any) -> Any:
    """``MultiStepAgent._run_stream(task, max_steps, images)``: the run's span."""

    def run_stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        task = kwargs.get("task", args[0] if args else None)
        inner = wrapped(*args, **kwargs)
        return iterate_in_span(inner, lambda: _start(instance, task, tracer()), _observe, _end)

    return run_stream


@never_raise("smolagents tool calls", default=None)
def _calls_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[list[Any]] | None:
    message = kwargs.get("chat_message", args[0] if args else None)
    calls = []
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        calls.append([getattr(function, "name", None), getattr(function, "arguments", None), call.id, False])
    return calls


def process_tool_calls(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``ToolCallingAgent.process_tool_calls``: its steps see the model's calls (with ids)."""
    calls = _calls_of(args, kwargs)
    inner = wrapped(*args, **kwargs)
    if calls is None:
        return inner
    return _with_calls(inner, calls)


def _with_calls(inner: Any, calls: list[list[Any]]) -> Any:
    try:
        while True:
            token = _PENDING.set(calls)
            try:
                item = next(inner)
            except StopIteration:
                return
            finally:
                _PENDING.reset(token)
            yield item
    finally:
        inner.close()


def _call_id(name: str, arguments: Any) -> str | None:
    """The id of the model's call of ``name`` with ``arguments`` (the first one not yet taken)."""
    pending = _PENDING.get()
    if not pending:
        return None
    for match_arguments in (True, False):
        for entry in pending:
            if entry[3] or entry[0] != name or (match_arguments and entry[1] != arguments):
                continue
            entry[3] = True
            return entry[2] if isinstance(entry[2], str) else None
    return None


@never_raise("smolagents tool start", default=None)
def _start_tool(agent: Any, name: Any, arguments: Any, tracer: trace.Tracer) -> Any:
    name = str(name)
    tools = {**(getattr(agent, "tools", None) or {}), **(getattr(agent, "managed_agents", None) or {})}
    tool = tools.get(name)
    return start_tool_call(
        name,
        tracer=tracer,
        call_id=_call_id(name, arguments),
        description=getattr(tool, "description", None),
        arguments=jsonable(arguments),
    )


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def execute_wrapper(tracer: Any) -> Any:
    """``ToolCallingAgent.execute_tool_call(tool_name, arguments)``: the call's span, with its id."""

    def execute(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        name = kwargs.get("tool_name", args[0] if args else None)
        arguments = kwargs.get("arguments", args[1] if len(args) > 1 else None)
        call = _start_tool(instance, name, arguments, tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, output = _replay.answer_call(
                call, str(name), call.span.attributes.get("gen_ai.tool.call.id")
            )
            if found:
                return output
        return call.run(wrapped, args, kwargs, _outcome)

    return execute


def _tool_name(tool: Any) -> str:
    try:
        return str(getattr(tool, "name", None) or type(tool).__name__)
    except Exception:  # a name that cannot be read: never into the agent
        return type(tool).__name__


@never_raise("smolagents tool start", default=None)
def _start_plain_tool(tool: Any, args: Any, kwargs: dict[str, Any], tracer: trace.Tracer) -> Any:
    arguments = {k: v for k, v in kwargs.items() if k != "sanitize_inputs_outputs"}
    if args:
        arguments = (
            {"args": list(args), **arguments} if arguments else args[0] if len(args) == 1 else list(args)
        )
    return start_tool_call(
        _tool_name(tool),
        tracer=tracer,
        description=getattr(tool, "description", None),
        arguments=jsonable(arguments),
    )


def tool_call_wrapper(tracer: Any) -> Any:
    """``Tool.__call__``: a tool called outside ``execute_tool_call`` (a ``CodeAgent``'s code).
    In a model replay (``tools="recorded"``) it is answered from the recording by its name, the
    recorded calls of that tool in order (code has no call id to match)."""

    def call_tool(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start_plain_tool(instance, args, kwargs, tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        if not call.owned:  # under execute_tool_call's span of this tool: that span records it
            return wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, output = _replay.answer_call(call, _tool_name(instance))
            if found:
                return output
        return call.run(wrapped, args, kwargs, _outcome)

    return call_tool
