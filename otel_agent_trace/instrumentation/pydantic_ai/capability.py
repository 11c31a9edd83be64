"""The capability we add to every Pydantic AI run (``Agent.iter``'s ``capabilities``).

* ``wrap_run``: the run's ``invoke_agent {name}`` span, current while the run goes on, with the
  run's prompt and output in the session (``agent_input`` / ``agent_output``). When Pydantic AI's
  own instrumentation runs, its ``invoke_agent`` span is already current here (its capability is
  outermost): that span gets the content and no second agent span is made.
* ``wrap_tool_execute``: one ``execute_tool {name}`` span per call, with the model's call id, the
  tool's description, arguments and result; inside Pydantic AI's own ``execute_tool`` span of the
  same tool, that span is joined (``start_tool_call``). Under a model replay with
  ``--tools recorded`` the call is answered from the recording and the tool is not run.

Pydantic AI's own ``chat`` spans need nothing here: the SDK call underneath adopts a model span it
finds current (``model_call.begin``), so there is one model span per call either way; the adopted
span gets the call's results it lacks (the tool calls' ids), its own values stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from pydantic_ai.capabilities import AbstractCapability

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.genai_spans import import_path_of
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call

_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "bedrock": "aws.bedrock", "google": "gcp.gemini"}


def _name(ctx: Any) -> str:
    return str(getattr(getattr(ctx, "agent", None), "name", None) or "agent")


def _provider_and_model(ctx: Any) -> tuple[str | None, str | None]:
    model = getattr(ctx, "model", None)
    if model is None:
        return None, None
    name = getattr(model, "model_name", None)
    system = getattr(model, "system", None)
    provider = _PROVIDERS.get(system, system) if isinstance(system, str) else None
    return provider, name if isinstance(name, str) else None


def _is_agent_span(span: Any) -> bool:
    attrs = getattr(span, "attributes", None) or {}
    return span.is_recording() and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT


@never_raise("pydantic-ai run start", default=(None, False))
def _start(ctx: Any, tracer: trace.Tracer) -> tuple[Any, bool]:
    """The run's agent span and whether it is ours (else Pydantic AI's own, current)."""
    current = trace.get_current_span()
    scope = getattr(current, "instrumentation_scope", None)  # an SDK span's (the API's have none)
    if _is_agent_span(current) and scope is not None and scope.name != gs.SCOPE and "pydantic" in scope.name:
        span, owned = current, False
    else:
        span, owned = None, True
    if span is None:
        provider, model = _provider_and_model(ctx)
        conversation = getattr(ctx, "conversation_id", None)
        span = tracer.start_span(
            gs.agent_span_name(_name(ctx)),
            attributes=gs.agent_attributes(
                _name(ctx),
                provider=provider,
                model=model,
                conversation_id=conversation if isinstance(conversation, str) else None,
            ),
        )
    prompt = getattr(ctx, "prompt", None)
    if sink.active() is not None and prompt is not None:
        gs.record_content(span, agent_input=jsonable(prompt))
    return span, owned


@never_raise("pydantic-ai run end")
def _end(span: Any, owned: bool, result: Any, error: BaseException | None) -> None:
    try:
        if error is not None:
            if owned:
                gs.record_error(span, error)
        elif sink.active() is not None:
            gs.record_content(span, agent_output=jsonable(getattr(result, "output", None)))
    finally:
        if owned:
            span.end()


def _function(ctx: Any, name: str) -> Any:
    """The Python function of a function tool (for its import path), when the run's toolset says."""
    tool = (getattr(getattr(ctx, "tool_manager", None), "tools", None) or {}).get(name)
    toolset = getattr(tool, "toolset", None)
    for _ in range(8):  # a toolset may be wrapped (prefixed, filtered, …)
        if toolset is None or hasattr(toolset, "tools"):
            break
        toolset = getattr(toolset, "wrapped", None)
    own = (getattr(toolset, "tools", None) or {}).get(name) if toolset is not None else None
    return getattr(own, "function", None)


@never_raise("pydantic-ai tool start", default=None)
def _start_tool(ctx: Any, call: Any, tool_def: Any, args: Any, tracer: trace.Tracer) -> Any:
    name = str(getattr(call, "tool_name", None) or "tool")
    function = _function(ctx, name)
    return start_tool_call(
        name,
        tracer=tracer,
        call_id=getattr(call, "tool_call_id", None),
        description=getattr(tool_def, "description", None),
        import_path=import_path_of(function) if callable(function) else None,
        arguments=jsonable(args),
    )


@never_raise("pydantic-ai tool content")
def _joined_io(span: Any, **io: Any) -> None:
    for key, value in io.items():
        gs.record_tool_io(span, **{key: jsonable(value), f"has_{key}": True})


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def make_capability(tracer: Any) -> type:
    """Our capability class, bound to the instrumentor's tracer (``Patches.tracer``)."""

    @dataclass
    class AgentTraceCapability(AbstractCapability[Any]):
        """otel-agent-trace's spans for this run (added by ``agent_trace_pydantic_ai``)."""

        async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
            span, owned = _start(ctx, tracer())
            if span is None:
                return await handler()
            try:
                with trace.use_span(
                    span, end_on_exit=False, record_exception=False, set_status_on_exception=False
                ):
                    result = await handler()
            except BaseException as exc:
                _end(span, owned, None, exc)
                raise
            _end(span, owned, result, None)
            return result

        async def wrap_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any
        ) -> Any:
            tool = _start_tool(ctx, call, tool_def, args, tracer())
            if tool is None:
                return await handler(args)
            if _replay.player is not None:
                found, output = _replay.answer_call(
                    tool, str(call.tool_name), getattr(call, "tool_call_id", None)
                )
                if found:
                    return output
            if tool.owned:
                return await tool.arun(handler, (args,), {}, _outcome)
            # Pydantic AI's own tool span: it ends it; its arguments and result go to the session
            _joined_io(tool.span, arguments=args)
            result = await handler(args)
            _joined_io(tool.span, result=result)
            return result

    return AgentTraceCapability


def iter_wrapper(tracer: Any) -> Any:
    """``Agent.iter``: the run gets our capability (once) beside the caller's."""
    capability = make_capability(tracer)

    def iter_(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        given = kwargs.get("capabilities")
        if not any(isinstance(c, capability) for c in given or ()):
            kwargs = {**kwargs, "capabilities": [*(given or ()), capability()]}
        return wrapped(*args, **kwargs)

    return iter_
