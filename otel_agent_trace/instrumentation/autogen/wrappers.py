"""AutoGen's agent and tool spans, enriched.

* ``AssistantAgent.on_messages_stream`` (``run``, ``run_stream``, ``on_messages`` and a team's
  turns all go through it): AutoGen's ``invoke_agent`` span is current when it starts; it gets
  ``gen_ai.provider.name`` / ``gen_ai.request.model`` (the model client's), the new messages as
  ``agent_input`` and the final ``Response``'s message as ``agent_output``. With no agent span
  current, the call gets an ``invoke_agent`` span of ours, current only while a step runs.
* ``FunctionTool.run``: AutoGen's ``execute_tool`` span of the tool is current: it gets the
  arguments and the result (in the session; on the span as the content setting says); a tool
  run outside it gets an ``execute_tool`` span of ours.
* ``BaseGroupChat.run_stream`` (a team's ``run`` goes through it): AutoGen makes no span for a
  team run, and its agent runtime starts a span of its own for every message (``autogen
  publish``, ``autogen process``, with links, no parent) in the context its message loop was
  started in: with none current, every agent turn is a trace of its own. An
  ``invoke_workflow {team name}`` span of ours is current while each step of the run's
  generator runs, so the embedded runtime started there (``SingleThreadedAgentRuntime.start``)
  copies it into its message loop and every message, agent turn, model and tool call of the
  run is under it, one trace; the task as ``agent_input``, the final ``TaskResult``'s last
  message as ``agent_output``.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._genai.scoped import aiterate_in_span
from otel_agent_trace.instrumentation.context.tool_calls import enclosing_tool_span, start_tool_call

# AutoGen model clients → the provider they call
_PROVIDERS = {
    "OpenAIChatCompletionClient": "openai",
    "AzureOpenAIChatCompletionClient": "azure.ai.openai",
    "AnthropicChatCompletionClient": "anthropic",
    "AnthropicBedrockChatCompletionClient": "aws.bedrock",
    "OllamaChatCompletionClient": "ollama",
    "AzureAIChatCompletionClient": "azure.ai.inference",
}


class _Turn:
    __slots__ = ("span", "owned", "has_output")

    def __init__(self, span: Any, owned: bool):
        self.span = span
        self.owned = owned
        self.has_output = False


def _model(agent: Any) -> tuple[str | None, str | None]:
    client = getattr(agent, "_model_client", None)
    if client is None:
        return None, None
    args = getattr(client, "_create_args", None)
    model = args.get("model") if isinstance(args, dict) else None
    return _PROVIDERS.get(type(client).__name__), model if isinstance(model, str) else None


def _texts(messages: Any) -> Any:
    out = []
    for message in messages or ():
        content = getattr(message, "content", message)
        out.append(content if isinstance(content, str) else jsonable(content))
    return out[0] if len(out) == 1 else out


@never_raise("autogen agent start", default=None)
def _start(agent: Any, messages: Any, tracer: trace.Tracer) -> _Turn | None:
    current = trace.get_current_span()
    attrs = getattr(current, "attributes", None) or {}
    provider, model = _model(agent)
    if current.is_recording() and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT:
        turn = _Turn(current, owned=False)
        extra = {semconv.GEN_AI_PROVIDER_NAME: provider, semconv.GEN_AI_REQUEST_MODEL: model}
        current.set_attributes({k: v for k, v in extra.items() if v is not None and k not in attrs})
    else:
        name = str(getattr(agent, "name", None) or "agent")
        description = getattr(agent, "description", None)
        span = tracer.start_span(
            gs.agent_span_name(name),
            attributes=gs.agent_attributes(
                name,
                description=description if isinstance(description, str) else None,
                provider=provider,
                model=model,
            ),
        )
        turn = _Turn(span, owned=True)
    if sink.active() is not None and messages:
        gs.record_content(turn.span, agent_input=_texts(messages))
    return turn


@never_raise("autogen agent step")
def _observe(turn: _Turn, item: Any) -> None:
    """The final ``Response``: its message is the output, recorded at once (``on_messages``
    returns at the ``Response`` and leaves this generator to be closed later)."""
    if type(item).__name__ != "Response" or turn.has_output:
        return
    message = getattr(item, "chat_message", None)
    output = getattr(message, "content", message)
    turn.has_output = True
    if sink.active() is not None:
        gs.record_content(turn.span, agent_output=output if isinstance(output, str) else jsonable(output))


@never_raise("autogen agent end")
def _end(turn: _Turn, error: BaseException | None, exhausted: bool) -> None:
    if not turn.owned:
        return
    try:
        if error is not None and not isinstance(error, GeneratorExit):
            gs.record_error(turn.span, error)
    finally:
        turn.span.end()


async def _enrich(inner: Any, turn: _Turn) -> Any:
    """AutoGen's span is current already: observe the items, never change the context."""
    try:
        async for item in inner:
            _observe(turn, item)
            yield item
    finally:
        await inner.aclose()


def messages_stream_wrapper(tracer: Any) -> Any:
    """``AssistantAgent.on_messages_stream(messages, cancellation_token)``."""

    def on_messages_stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        messages = kwargs.get("messages", args[0] if args else None)
        inner = wrapped(*args, **kwargs)
        turn = _start(instance, messages, tracer())
        if turn is None:
            return inner
        if not turn.owned:
            return _enrich(inner, turn)
        return aiterate_in_span(inner, lambda: turn, _observe, _end)

    return on_messages_stream


@never_raise("autogen tool content")
def _joined_io(span: Any, **io: Any) -> None:
    for key, value in io.items():
        gs.record_tool_io(span, **{key: jsonable(value), f"has_{key}": True})


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    model = kwargs.get("args", args[0] if args else None)
    dump = getattr(model, "model_dump", None)
    return dump() if callable(dump) else jsonable(model)


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def tool_run_wrapper(tracer: Any) -> Any:
    """``FunctionTool.run(args, cancellation_token)``: under AutoGen's tool span, its content."""

    async def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        name = str(getattr(instance, "name", None) or "tool")
        span = enclosing_tool_span(name)
        if span is not None:
            _joined_io(span, arguments=_arguments(args, kwargs))
            result = await wrapped(*args, **kwargs)
            _joined_io(span, result=result)
            return result
        call = start_tool_call(
            name,
            tracer=tracer(),
            description=getattr(instance, "description", None),
            arguments=_arguments(args, kwargs),
        )
        if call is None:
            return await wrapped(*args, **kwargs)
        return await call.arun(wrapped, args, kwargs, _outcome)

    return run


class _Team:
    __slots__ = ("span",)

    def __init__(self, span: Any):
        self.span = span


def _task_input(task: Any) -> Any:
    if task is None or isinstance(task, str):
        return task
    return _texts(task if isinstance(task, (list, tuple)) else [task])


@never_raise("autogen team start", default=None)
def _start_team(team: Any, kwargs: dict[str, Any], tracer: trace.Tracer) -> _Team | None:
    name = getattr(team, "name", None)
    name = name if isinstance(name, str) and name else type(team).__name__
    attributes: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_WORKFLOW,
        "gen_ai.workflow.name": name,
    }
    description = getattr(team, "description", None)
    if isinstance(description, str) and description:
        attributes[semconv.GEN_AI_AGENT_DESCRIPTION] = description
    span = tracer.start_span(f"{semconv.OP_INVOKE_WORKFLOW} {name}", attributes=attributes)
    task = _task_input(kwargs.get("task"))
    if task is not None and sink.active() is not None:
        gs.record_content(span, agent_input=task)
    return _Team(span)


@never_raise("autogen team step")
def _observe_team(team: _Team, item: Any) -> None:
    """The final ``TaskResult``: its last message is the team's output."""
    if type(item).__name__ != "TaskResult" or sink.active() is None:
        return
    messages = getattr(item, "messages", None) or ()
    if messages:
        output = getattr(messages[-1], "content", None)
        gs.record_content(team.span, agent_output=output if isinstance(output, str) else jsonable(output))


@never_raise("autogen team end")
def _end_team(team: _Team, error: BaseException | None, exhausted: bool) -> None:
    try:
        if error is not None and not isinstance(error, GeneratorExit):
            gs.record_error(team.span, error)
    finally:
        team.span.end()


def team_stream_wrapper(tracer: Any) -> Any:
    """``BaseGroupChat.run_stream(*, task, cancellation_token, ...)``: an ``invoke_workflow``
    span, current while each step of the run runs (never across a ``yield``)."""

    def run_stream(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        inner = wrapped(*args, **kwargs)
        return aiterate_in_span(
            inner, lambda: _start_team(instance, kwargs, tracer()), _observe_team, _end_team
        )

    return run_stream
