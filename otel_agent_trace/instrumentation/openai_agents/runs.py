"""OpenAI Agents SDK runs: one ``invoke_agent {name}`` span per ``Runner.run`` / ``run_sync`` /
``run_streamed``, with every model and tool call of the run under it (one trace per run).

* ``AgentRunner.run`` (``Runner.run``, and ``run_sync``, which runs it as a task): the span is
  current while the run is awaited and ends with it.
* ``AgentRunner.run_streamed`` returns at once and runs the loop as a task: the span is current
  when that task is created (a task copies the context), and ends when the task is done —
  the stream consumed, cancelled, or the run failed — or, at the latest, when the result object
  is collected (a loop closed with the task pending).
* A **handoff** makes the next turn run under a nested ``invoke_agent {new agent}`` span, child
  of the agent that handed over; nested spans end with the run. The turn functions of the loop
  (``run_single_turn``, ``run_single_turn_streamed``) are wrapped to make the right agent span
  current, found through a context variable the run's wrapper sets.

The SDK's own tracing (its ``TracingProcessor`` s, exporting to the vendor unless disabled) is not
OpenTelemetry and is left alone: no processor of ours is added to it, nothing of it is changed.
"""

from __future__ import annotations

import contextvars
import weakref
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error, never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable

_OPENAI_MODELS = "agents.models.openai"  # module prefix of the SDK's own OpenAI models


class _Run:
    """The agent spans of one run, outermost first; the last one is the agent now running."""

    __slots__ = ("spans", "ended")

    def __init__(self, agent: Any, span: Any):
        self.spans: list[tuple[Any, Any]] = [(agent, span)]
        self.ended = False

    def span_for(self, agent: Any, tracer: trace.Tracer) -> Any:
        """The span of the agent taking this turn: a handoff's new agent gets a nested span."""
        current, span = self.spans[-1]
        if agent is None or agent is current:
            return span
        nested = tracer.start_span(
            gs.agent_span_name(_name(agent)),
            context=trace.set_span_in_context(span),
            attributes=_attributes(agent, None),
        )
        self.spans.append((agent, nested))
        return nested

    def end(self, error: BaseException | None = None, output: Any = None, has_output: bool = False) -> None:
        if self.ended:
            return
        self.ended = True
        for i, (_agent, span) in enumerate(reversed(self.spans)):
            try:
                if error is not None:
                    gs.record_error(span, error)
                elif i == len(self.spans) - 1 and has_output and sink.active() is not None:
                    gs.record_content(span, agent_output=jsonable(output))
            except Exception as exc:  # never into the agent
                internal_error("ending an openai-agents run", exc)
            finally:
                span.end()


_RUN: contextvars.ContextVar[_Run | None] = contextvars.ContextVar(
    "agent_trace_openai_agents_run", default=None
)


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or "agent")


def _model_name(agent: Any) -> tuple[str | None, str | None]:
    """(provider, model) of an agent, when it says: a model name, or one of the SDK's OpenAI models."""
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return None, model
    if model is None:
        return None, None
    name = getattr(model, "model", None)
    provider = "openai" if type(model).__module__.startswith(_OPENAI_MODELS) else None
    return provider, name if isinstance(name, str) else None


def _attributes(agent: Any, conversation_id: Any) -> dict[str, Any]:
    provider, model = _model_name(agent)
    description = getattr(agent, "handoff_description", None)
    return gs.agent_attributes(
        _name(agent),
        description=description if isinstance(description, str) else None,
        provider=provider,
        model=model,
        conversation_id=conversation_id if isinstance(conversation_id, str) else None,
    )


def _conversation(kwargs: dict[str, Any]) -> Any:
    """The run's conversation: the server-side ``conversation_id``, else the SDK session's id."""
    return kwargs.get("conversation_id") or getattr(kwargs.get("session"), "session_id", None)


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    agent = args[0] if args else kwargs.get("starting_agent")
    run_input = args[1] if len(args) > 1 else kwargs.get("input")
    return agent, run_input


@never_raise("openai-agents run start", default=None)
def _start(args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> _Run | None:
    agent, run_input = _arguments(args, kwargs)
    if agent is None:
        return None
    span = tracer.start_span(
        gs.agent_span_name(_name(agent)), attributes=_attributes(agent, _conversation(kwargs))
    )
    if sink.active() is not None and isinstance(run_input, (str, list)):
        gs.record_content(span, agent_input=jsonable(run_input))
    return _Run(agent, span)


def _enter(run: _Run) -> tuple[object, contextvars.Token[_Run | None]]:
    return otel_context.attach(trace.set_span_in_context(run.spans[0][1])), _RUN.set(run)


def _leave(tokens: tuple[object, contextvars.Token[_Run | None]]) -> None:
    _RUN.reset(tokens[1])
    otel_context.detach(tokens[0])  # type: ignore[arg-type]  # logs, never raises


def run_wrapper(tracer: Any) -> Any:
    """``AgentRunner.run``: the run's span, current while it is awaited."""

    async def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start(args, kwargs, tracer())
        if state is None:
            return await wrapped(*args, **kwargs)
        tokens = _enter(state)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            _leave(tokens)
            state.end(error=exc)
            raise
        _leave(tokens)
        state.end(output=getattr(result, "final_output", None), has_output=True)
        return result

    return run


def run_streamed_wrapper(tracer: Any) -> Any:
    """``AgentRunner.run_streamed``: the span is current while the loop's task is created and
    ends when that task is done (or the result is collected)."""

    def run_streamed(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        state = _start(args, kwargs, tracer())
        if state is None:
            return wrapped(*args, **kwargs)
        tokens = _enter(state)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            _leave(tokens)
            state.end(error=exc)
            raise
        _leave(tokens)
        _end_with_stream(state, result)
        return result

    return run_streamed


@never_raise("openai-agents streamed run")
def _end_with_stream(state: _Run, result: Any) -> None:
    task = getattr(result, "run_loop_task", None)
    weakref.finalize(result, state.end)  # the last resort: never left open
    if task is None or not hasattr(task, "add_done_callback"):
        state.end()
        return
    ref = weakref.ref(result)
    task.add_done_callback(lambda done: _stream_done(state, ref, done))


@never_raise("openai-agents streamed run end")
def _stream_done(state: _Run, ref: Any, task: Any) -> None:
    result = ref()
    # The SDK keeps the run's error on the result (stream_events raises it); the task's own
    # exception is not read here, so asyncio's "never retrieved" report stays as it was.
    error = getattr(result, "_stored_exception", None) if result is not None else None
    if isinstance(error, BaseException):
        state.end(error=error)
    elif task.cancelled():
        state.spans[0][1].set_attribute(semconv.STREAM_ABANDONED, True)
        state.end()
    else:
        state.end(output=getattr(result, "final_output", None), has_output=result is not None)


def _turn_agent(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    bindings = kwargs.get("bindings")
    if bindings is None and len(args) > 1:
        bindings = args[1]  # run_single_turn_streamed(streamed_result, bindings, ...)
    return getattr(bindings, "public_agent", None)


@never_raise("openai-agents turn", default=None)
def _turn_context(args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> object | None:
    run = _RUN.get()
    if run is None or run.ended:
        return None
    span = run.span_for(_turn_agent(args, kwargs), tracer)
    if span is trace.get_current_span():
        return None
    return otel_context.attach(trace.set_span_in_context(span))


def turn_wrapper(tracer: Any) -> Any:
    """``run_single_turn`` / ``run_single_turn_streamed``: the turn runs under its agent's span."""

    async def turn(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        token = _turn_context(args, kwargs, tracer())
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if token is not None:
                otel_context.detach(token)  # type: ignore[arg-type]

    return turn
