"""DSPy module calls and tool calls.

* ``Module.__call__`` / ``Module.acall`` (every module: ``Predict`` and ``ReAct`` override
  ``__call__``/``acall`` and call these): ``invoke_agent {name}``, current for the call, for a
  top-level call only — the modules a module calls (``ReAct``'s ``Predict`` and
  ``ChainOfThought``, a program's predictors) run under it without spans of their own; a module
  called inside a tool starts a span again, under the tool's. The name: a program's class name
  (``class Weather(dspy.Module)``), or for DSPy's own modules the name of a signature class the
  user declared (``dspy.ReAct(Weather, ...)`` → ``Weather``), else DSPy's class (``ReAct``).
  The call's keyword inputs are ``agent_input``, the returned ``Prediction``'s fields
  ``agent_output`` (a ``ReAct``'s ``trajectory`` too).
* ``Tool.__call__`` / ``Tool.acall``: ``execute_tool {name}`` with the arguments and the result.
  A ``ReAct`` model writes the tool's name and its arguments as text (``next_tool_name``,
  ``next_tool_args`` as JSON) in its answer: there is no call id, and none is made up. ``ReAct``
  turns a tool's exception into an ``Execution error in …`` observation for the model: the span
  has the exception (status ``ERROR``). ``ReAct``'s own ``finish`` tool is a ``Tool`` too. In a
  model replay (``tools="recorded"``) a call is answered from the recording by the tool's name,
  the recorded calls of that tool in order, and the tool is not run.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation.context.tool_calls import start_tool_call
from otel_agent_trace.instrumentation.dspy.native import provider_and_model

_PLAIN_SIGNATURE = "StringSignature"  # the class DSPy makes of a "question -> answer" string
_RUNNING: set[int] = set()  # span ids of our module spans not yet ended


def _signature_of(module: Any) -> Any:
    signature = getattr(module, "signature", None)
    if signature is None:  # ChainOfThought: its Predict holds the (extended) signature
        signature = getattr(getattr(module, "predict", None), "signature", None)
    return signature


def _name(module: Any) -> str:
    cls = type(module)
    if cls.__module__.startswith("dspy."):
        name = getattr(_signature_of(module), "__name__", None)
        if isinstance(name, str) and name and name != _PLAIN_SIGNATURE:
            return name
    return cls.__name__


def _description(module: Any) -> str | None:
    signature = _signature_of(module)
    if getattr(signature, "__name__", _PLAIN_SIGNATURE) == _PLAIN_SIGNATURE:
        return None  # DSPy's generated "Given the fields …" text, not the user's
    instructions = getattr(signature, "instructions", None)
    return instructions if isinstance(instructions, str) and instructions else None


def _model(module: Any) -> tuple[str | None, str | None]:
    """The provider and model of the LM the module would use (its own, else ``dspy.configure``'s),
    read as the model spans read them (:func:`.native.provider_and_model`)."""
    lm = getattr(module, "lm", None)
    if lm is None:
        from dspy.dsp.utils.settings import settings

        lm = settings.lm
    model = getattr(lm, "model", None)
    if not isinstance(model, str) or not model:
        return None, None
    return provider_and_model(model)


def _inside_one() -> bool:
    """A module span of ours is current: this call is part of that module's run."""
    return trace.get_current_span().get_span_context().span_id in _RUNNING


def _output(result: Any) -> Any:
    to_dict = getattr(result, "toDict", None)  # a Prediction: its fields
    return jsonable(to_dict() if callable(to_dict) else result)


class _Run:
    """One top-level module call: its span, current while the call runs."""

    __slots__ = ("span", "span_id")

    def __init__(self, span: Any):
        self.span = span
        self.span_id = span.get_span_context().span_id
        _RUNNING.add(self.span_id)

    @never_raise("dspy module end")
    def end(self, result: Any, error: BaseException | None) -> None:
        _RUNNING.discard(self.span_id)
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
            self.end(None, exc)
            raise
        self.end(result, None)
        return result

    async def acall(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        try:
            with trace.use_span(
                self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self.end(None, exc)
            raise
        self.end(result, None)
        return result


@never_raise("dspy module start", default=None)
def _start(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> _Run | None:
    if _inside_one():
        return None
    name = _name(module)
    provider, model = _model(module)
    span = tracer.start_span(
        gs.agent_span_name(name),
        attributes=gs.agent_attributes(
            name, description=_description(module), provider=provider, model=model
        ),
    )
    if sink.active() is not None:
        inputs: Any = dict(kwargs)
        if args:
            inputs = {"args": list(args), **inputs} if inputs else list(args)
        gs.record_content(span, agent_input=jsonable(inputs))
    return _Run(span)


def module_wrapper(tracer: Any) -> Any:
    """``Module.__call__(*args, **kwargs)``: a top-level call's span."""

    def call(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        run = _start(instance, args, kwargs, tracer())
        return wrapped(*args, **kwargs) if run is None else run.call(wrapped, args, kwargs)

    return call


def async_module_wrapper(tracer: Any) -> Any:
    """``Module.acall(*args, **kwargs)``: the same for an awaited call."""

    async def acall(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        run = _start(instance, args, kwargs, tracer())
        return await wrapped(*args, **kwargs) if run is None else await run.acall(wrapped, args, kwargs)

    return acall


def _tool_name(tool: Any) -> str:
    try:
        return str(getattr(tool, "name", None) or type(tool).__name__)
    except Exception:  # a name that cannot be read: never into the agent
        return type(tool).__name__


@never_raise("dspy tool start", default=None)
def _start_tool(tool: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: trace.Tracer) -> Any:
    arguments: Any = dict(kwargs)
    if args:  # DSPy calls tools with keywords; a direct positional call is kept as it came
        arguments = {"args": list(args), **arguments} if arguments else list(args)
    description = getattr(tool, "desc", None)
    func = getattr(tool, "func", None)
    return start_tool_call(
        _tool_name(tool),
        tracer=tracer,
        description=description if isinstance(description, str) else None,
        import_path=gs.import_path_of(func) if callable(func) else None,
        arguments=jsonable(arguments),
    )


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def tool_wrapper(tracer: Any) -> Any:
    """``Tool.__call__(**kwargs)``: the call's span; in a model replay, the recorded result."""

    def call(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        tool_call = _start_tool(instance, args, kwargs, tracer())
        if tool_call is None or not tool_call.owned:
            return wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, output = _replay.answer_call(tool_call, _tool_name(instance))
            if found:
                return output
        return tool_call.run(wrapped, args, kwargs, _outcome)

    return call


def async_tool_wrapper(tracer: Any) -> Any:
    """``Tool.acall(**kwargs)``: the same, awaited."""

    async def acall(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        tool_call = _start_tool(instance, args, kwargs, tracer())
        if tool_call is None or not tool_call.owned:
            return await wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, output = _replay.answer_call(tool_call, _tool_name(instance))
            if found:
                return output
        return await tool_call.arun(wrapped, args, kwargs, _outcome)

    return acall
