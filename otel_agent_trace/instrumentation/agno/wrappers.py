"""Agno runs and tool calls.

* ``Agent.run(input, stream=...)``: the run's span is started and made current for the call.
  Not streamed, the call is the run: the span ends with it, its ``RunOutput``'s content the
  ``agent_output``. Streamed, the call returns a generator of events: the span is current only
  while the generator runs (never across a ``yield``) and ends when it is exhausted, closed or
  fails; the output is the ``RunCompletedEvent``'s (or the ``RunOutput``'s) content, else the
  text of the content events joined. Agno does not raise for a failed run: a ``RunOutput`` with
  the status ``ERROR`` or a ``RunErrorEvent`` makes the span's status ``ERROR``.
* ``Agent.arun``: the same for a coroutine (the span current while it is awaited) and for an
  async generator of events. ``Team.run`` / ``Team.arun`` the same.
* ``FunctionCall.execute`` / ``aexecute``: one tool call, with the model's call id
  (``FunctionCall.call_id``), its arguments and its ``FunctionExecutionResult`` (a ``failure``
  status is the span's error: Agno hands the error text to the model and goes on). A tool that
  returns a generator (a team's ``delegate_task_to_member``, which runs the member) keeps its span
  open, current while Agno reads the generator, its text the result. Model-replayed with
  ``tools="recorded"``, a call is answered from the recording by its call id.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace._internal.sdk_compat import detach_quietly
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._genai.scoped import aiterate_in_span, iterate_in_span
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call

# Agno's model classes → the provider they call (``gen_ai.provider.name``)
_PROVIDERS = {
    "OpenAIChat": "openai",
    "OpenAIResponses": "openai",
    "AzureOpenAI": "azure.ai.openai",
    "Claude": "anthropic",
    "Gemini": "gcp.gemini",
    "AwsBedrock": "aws.bedrock",
    "Groq": "groq",
    "MistralChat": "mistral_ai",
    "Cohere": "cohere",
    "Ollama": "ollama",
    "LiteLLM": "litellm",
    "xAI": "x_ai",
    "DeepSeek": "deepseek",
}


class _Run:
    __slots__ = ("span", "output", "has_output", "chunks", "failure")

    def __init__(self, span: Any):
        self.span = span
        self.output: Any = None
        self.has_output = False
        self.chunks: list[str] = []
        self.failure: tuple[str, str] | None = None  # (error type, message): Agno does not raise


def _name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return str(name) if isinstance(name, str) and name else type(agent).__name__


def _input_of(args: Any, kwargs: dict[str, Any]) -> Any:
    return kwargs.get("input", args[0] if args else None)


_MESSAGE_FIELDS = {"role", "content", "name", "tool_calls", "tool_call_id"}


def _message(value: Any) -> Any:
    """An Agno ``Message`` as the chat message it stands for (not its ids, metrics and flags)."""
    if type(value).__name__ == "Message" and hasattr(value, "model_dump"):
        return jsonable(value.model_dump(include=_MESSAGE_FIELDS, exclude_none=True))
    return jsonable(value)


def _input_content(task: Any) -> Any:
    """A run's input: text, a message, a list of messages (a resumed conversation), a dict."""
    if isinstance(task, list):
        return [_message(m) for m in task]
    return _message(task)


@never_raise("agno run start", default=None)
def _start(agent: Any, task: Any, tracer: trace.Tracer) -> _Run | None:
    model = getattr(agent, "model", None)
    model_id = getattr(model, "id", None)
    description = getattr(agent, "description", None)
    agent_id = getattr(agent, "id", None)
    span = tracer.start_span(
        gs.agent_span_name(_name(agent)),
        attributes=gs.agent_attributes(
            _name(agent),
            agent_id=agent_id if isinstance(agent_id, str) else None,
            description=description if isinstance(description, str) else None,
            provider=_PROVIDERS.get(type(model).__name__),
            model=model_id if isinstance(model_id, str) else None,
        ),
    )
    if sink.active() is not None and task is not None:
        gs.record_content(span, agent_input=_input_content(task))
    return _Run(span)


def _failure(item: Any) -> tuple[str, str]:
    error_type = getattr(item, "error_type", None)
    content = getattr(item, "content", None)
    return str(error_type or "RunError"), str(content or "error")[:1000]


@never_raise("agno run event")
def _observe(state: _Run, item: Any) -> None:
    """A run's ``RunOutput`` (its status ``ERROR`` for a run that failed) or a streamed event."""
    kind = type(item).__name__
    if kind in ("RunOutput", "TeamRunOutput", "RunCompletedEvent"):
        state.output, state.has_output = getattr(item, "content", None), True
        if getattr(getattr(item, "status", None), "value", None) == "ERROR":
            state.failure = _failure(item)
    elif kind == "RunErrorEvent":
        state.failure = _failure(item)
    elif kind == "RunContentEvent":
        content = getattr(item, "content", None)
        if isinstance(content, str):
            state.chunks.append(content)


@never_raise("agno run end")
def _end(state: _Run, error: BaseException | None, exhausted: bool) -> None:
    try:
        if error is not None:
            gs.record_error(state.span, error)
            return
        if state.failure is not None:
            state.span.set_attribute(semconv.ERROR_TYPE, state.failure[0])
            state.span.set_status(Status(StatusCode.ERROR, state.failure[1]))
            return
        if not state.has_output and state.chunks:
            state.output, state.has_output = "".join(state.chunks), True
        if state.has_output and sink.active() is not None:
            gs.record_content(state.span, agent_output=jsonable(state.output))
    finally:
        state.span.end()


def _called_in_span(state: _Run, wrapped: Any, args: Any, kwargs: Any) -> Any:
    """``wrapped(*args, **kwargs)`` with the run's span current; a raise ends the run."""
    token = otel_context.attach(trace.set_span_in_context(state.span))
    try:
        return wrapped(*args, **kwargs)
    except BaseException as exc:
        _end(state, exc, False)
        raise
    finally:
        detach_quietly(token)


def run_wrapper(tracer: Any) -> Any:
    """``Agent.run``: the run's span, current for the call (and for a streamed run's generator)."""

    def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start(instance, _input_of(args, kwargs), tracer())
        if state is None:
            return wrapped(*args, **kwargs)
        result = _called_in_span(state, wrapped, args, kwargs)
        if isinstance(result, Iterator) and not isinstance(result, (str, bytes)):
            return iterate_in_span(result, lambda: state, _observe, _end)
        _observe(state, result)
        _end(state, None, True)
        return result

    return run


async def _awaited(state: _Run, coroutine: Any) -> Any:
    token = otel_context.attach(trace.set_span_in_context(state.span))
    try:
        result = await coroutine
    except BaseException as exc:
        _end(state, exc, False)
        raise
    finally:
        detach_quietly(token)
    _observe(state, result)
    _end(state, None, True)
    return result


def arun_wrapper(tracer: Any) -> Any:
    """``Agent.arun``: a coroutine (awaited under the run's span) or an async generator of events
    (run under it, item by item)."""

    def arun(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start(instance, _input_of(args, kwargs), tracer())
        if state is None:
            return wrapped(*args, **kwargs)
        result = _called_in_span(state, wrapped, args, kwargs)
        if inspect.isawaitable(result):
            return _awaited(state, result)
        if isinstance(result, AsyncIterator):
            return aiterate_in_span(result, lambda: state, _observe, _end)
        _observe(state, result)  # (another version's shape: a plain value)
        _end(state, None, True)
        return result

    return arun


@never_raise("agno tool start", default=None)
def _start_tool(call: Any, tracer: trace.Tracer) -> Any:
    function = getattr(call, "function", None)
    name = str(getattr(function, "name", None) or "tool")
    description = getattr(function, "description", None)
    call_id = getattr(call, "call_id", None)
    return start_tool_call(
        name,
        tracer=tracer,
        call_id=call_id if isinstance(call_id, str) else None,
        description=description if isinstance(description, str) else None,
        arguments=jsonable(getattr(call, "arguments", None)),
    )


@never_raise("agno tool result", default=(None, None))
def _outcome(result: Any) -> tuple[Any, str | None]:
    """A ``FunctionExecutionResult``: its result, or its error (a ``failure``)."""
    if getattr(result, "status", None) == "failure":
        error = getattr(result, "error", None)
        return error, str(error or "failure")
    return jsonable(getattr(result, "result", None)), None


class _ToolStream:
    """A tool that returns a generator (Agno's ``delegate_task_to_member``: the member's run):
    its span stays open, current while Agno reads the generator, and ends with the text read."""

    __slots__ = ("call", "span", "chunks")

    def __init__(self, call: Any):
        self.call = call
        self.span = call.span
        self.chunks: list[str] = []


@never_raise("agno tool stream item")
def _tool_item(state: _ToolStream, item: Any) -> None:
    if isinstance(item, str):
        state.chunks.append(item)


@never_raise("agno tool stream end")
def _tool_end(state: _ToolStream, error: BaseException | None, exhausted: bool) -> None:
    if error is not None:
        state.call.fail(error)
    else:
        state.call.finish("".join(state.chunks))


def _streamed(call: Any, instance: Any, outcome: Any) -> bool:
    """A successful call whose result is a generator: read under the call's span, which then
    ends (``True``); else ``False`` (the caller finishes the call)."""
    value = getattr(outcome, "result", None)
    if getattr(outcome, "status", None) != "success":
        return False
    if inspect.isgenerator(value):
        wrapped: Any = iterate_in_span(value, lambda: _ToolStream(call), _tool_item, _tool_end)
    elif inspect.isasyncgen(value):
        wrapped = aiterate_in_span(value, lambda: _ToolStream(call), _tool_item, _tool_end)
    else:
        return False
    outcome.result = wrapped
    if getattr(instance, "result", None) is value:
        instance.result = wrapped
    return True


def _finished(call: Any, instance: Any, outcome: Any) -> Any:
    call.exit()
    try:
        streamed = _streamed(call, instance, outcome)
    except Exception:  # never the agent's problem: the call is recorded without its result
        streamed = False
    if not streamed:
        call.finish(*_outcome(outcome))
    return outcome


def _recorded(instance: Any, call: Any) -> tuple[bool, Any]:
    """In a model replay with ``tools="recorded"``: the call answered from the recording, as
    Agno's own ``FunctionExecutionResult``."""
    if _replay.player is None:
        return False, None
    name = str(call.span.attributes.get("gen_ai.tool.name"))
    found, output = _replay.answer_call(call, name, call.span.attributes.get("gen_ai.tool.call.id"))
    if not found:
        return False, None
    from agno.tools.function import FunctionExecutionResult

    instance.result = output
    return True, FunctionExecutionResult(status="success", result=output)


def execute_wrapper(tracer: Any) -> Any:
    """``FunctionCall.execute()``: the call's span, with the model's call id."""

    def execute(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start_tool(instance, tracer())
        if call is None:
            return wrapped(*args, **kwargs)
        found, answer = _recorded(instance, call)
        if found:
            return answer
        call.enter()
        try:
            outcome = wrapped(*args, **kwargs)
        except BaseException as exc:
            call.fail(exc)
            raise
        return _finished(call, instance, outcome)

    return execute


def aexecute_wrapper(tracer: Any) -> Any:
    """``FunctionCall.aexecute()``: :func:`execute_wrapper` for a coroutine."""

    async def aexecute(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start_tool(instance, tracer())
        if call is None:
            return await wrapped(*args, **kwargs)
        found, answer = _recorded(instance, call)
        if found:
            return answer
        call.enter()
        try:
            outcome = await wrapped(*args, **kwargs)
        except BaseException as exc:
            call.fail(exc)
            raise
        return _finished(call, instance, outcome)

    return aexecute
