"""One model call: its CLIENT span (``{operation} {model}``), its content and its snapshot.

Every model instrumentation (OpenAI, Anthropic, LangChain chat models, Strands) goes through
:func:`begin` so all model spans have one shape. One model call makes one model span:

* inside a model span that one of our framework instrumentations *claimed* (a LangChain chat
  model span, a Strands ``chat`` span), an SDK call makes no span of its own: the framework
  span already describes the call and records its content; the SDK call only hands its result
  (response id and model, which the framework never sees) to the claim;
* inside another package's model span (a peer instrumentation wrapped the SDK around us, or a
  framework's own model span: Google ADK's ``generate_content``, Pydantic AI's ``chat``), we
  make no span either but *adopt* that span: its content and snapshot still reach the session,
  and the result attributes it lacks (response id, finish reasons, usage...) are filled in,
  never one it has;
* otherwise the span is ours.

Full content goes to the session recorder (``attach_content``), never onto the span, unless
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Span, SpanKind

from otel_agent_trace import semconv
from otel_agent_trace._internal import genai_spans as gs
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace._internal.own_messages import OwnMessages
from otel_agent_trace._internal.sdk_compat import set_attributes_fast
from otel_agent_trace._version import __version__
from otel_agent_trace.instrumentation._genai.http_facts import MODEL_SPAN
from otel_agent_trace.instrumentation._genai.jsonable import text_of
from otel_agent_trace.settings import get_settings

MODEL_OPERATIONS = frozenset({semconv.OP_CHAT, semconv.OP_TEXT_COMPLETION, semconv.OP_GENERATE_CONTENT})
DETAILS_EVENT = "gen_ai.client.inference.operation.details"

_claimed: dict[int, dict[str, Any]] = {}
_tracer: trace.Tracer | None = None


def use_tracer_provider(provider: Any) -> None:
    """The provider of model spans begun without a tracer of their own (a wrapper made outside
    an instrumentor, as in the benchmarks); ``None`` means the global one. Instrumentors pass
    their own tracer to :func:`begin` (``Patches.tracer``)."""
    global _tracer
    _tracer = None if provider is None else provider.get_tracer(gs.SCOPE, __version__)


def _get_tracer() -> trace.Tracer:
    global _tracer
    if _tracer is None:
        _tracer = gs.tracer()  # a proxy until the global provider is set: it follows it then
    return _tracer


def claim(span: Span) -> dict[str, Any]:
    """Mark a model span whose content a framework instrumentation records: SDK calls under it
    make no span and record nothing, but note their provider, model and (as ``"result"``, a
    :class:`ModelResult`) result in the returned dict."""
    info: dict[str, Any] = {}
    _claimed[span.get_span_context().span_id] = info
    return info


def release(span: Span) -> dict[str, Any]:
    return _claimed.pop(span.get_span_context().span_id, None) or {}


def is_model_span(span: Any) -> bool:
    attrs = getattr(span, "attributes", None)
    if not attrs:
        return False
    if attrs.get(semconv.GEN_AI_OPERATION_NAME) in MODEL_OPERATIONS:
        return True
    # Peers that predate gen_ai.operation.name: OpenInference and OpenLLMetry.
    return attrs.get("openinference.span.kind") == "LLM" or "llm.request.type" in attrs


def _is_ours(span: Any) -> bool:
    scope = getattr(span, "instrumentation_scope", None)
    return scope is not None and scope.name == gs.SCOPE


def json_text(value: Any) -> str:
    return gs._json_text(value)


class ModelResult:
    """What a finished call returned (all optional)."""

    __slots__ = (
        "response_model",
        "response_id",
        "finish_reasons",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "reasoning_tokens",
        "output_messages",
        "tool_calls",
    )

    def __init__(self) -> None:
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.finish_reasons: list[str] = []
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.cache_read_tokens: int | None = None
        self.cache_creation_tokens: int | None = None
        self.reasoning_tokens: int | None = None
        self.output_messages: list[dict[str, Any]] = []
        self.tool_calls: list[tuple[str | None, str | None]] = []  # (call id, tool name)


class ModelCall:
    """A started model call. ``mode`` is ``"own"`` (our span), ``"adopt"`` (a peer's span) or
    ``"claimed"`` (a framework span of ours records the call: the result is handed to it in the
    claim's dict as ``"result"``, for the response id and model the framework never sees)."""

    __slots__ = (
        "span",
        "mode",
        "provider",
        "operation",
        "model",
        "name",
        "started_ns",
        "first_chunk_ns",
        "input_messages",
        "system",
        "tool_definitions",
        "to_semconv",
        "snapshot",
        "ended",
        "content",
    )

    def __init__(self, span: Span, mode: str, provider: str, operation: str, model: str | None):
        self.span = span
        self.mode = mode
        self.provider = provider
        self.operation = operation
        self.model = model
        self.name = f"{operation} {model}" if model else operation
        self.started_ns = time.monotonic_ns()
        self.first_chunk_ns: int | None = None
        self.input_messages: list[Any] = []
        self.system: Any = None
        self.tool_definitions: Any = None
        self.to_semconv: Callable[[list[Any]], list[dict[str, Any]]] | None = None
        self.snapshot = True
        self.ended = False
        self.content = False  # whether content is recorded (set by set_input)

    # -- input ----------------------------------------------------------------------------------

    @property
    def wants_content(self) -> bool:
        """Whether content is needed at all (a session records, or content capture is on)."""
        return sink.active() is not None or get_settings().content_captured

    def set_input(
        self,
        messages: list[Any],
        system: Any = None,
        tool_definitions: Any = None,
        to_semconv: Callable[[list[Any]], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.content = True
        self.input_messages = messages
        self.system = system
        self.tool_definitions = tool_definitions
        self.to_semconv = to_semconv

    # -- context --------------------------------------------------------------------------------

    def activate(self) -> tuple[object, object] | None:
        """Make our span current and the one the HTTP request under it is recorded on (a claimed
        framework span is already current: only the latter)."""
        if self.mode == "own":
            return otel_context.attach(trace.set_span_in_context(self.span)), MODEL_SPAN.set(self.span)
        if self.mode == "claimed":
            return None, MODEL_SPAN.set(self.span)
        return None

    @staticmethod
    def deactivate(token: tuple[object, object] | None) -> None:
        if token is not None:
            try:
                MODEL_SPAN.reset(token[1])  # type: ignore[arg-type]
            except ValueError:  # another context (a generator finalised elsewhere)
                MODEL_SPAN.set(None)
            if token[0] is not None:
                otel_context.detach(token[0])  # type: ignore[arg-type]  # logs, never raises

    def call(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        """Call the SDK with this span current; on an exception, record it, end the span and
        re-raise it unchanged. The caller finishes the span with the response."""
        token = self.activate()
        try:
            return wrapped(*args, **kwargs)
        except BaseException as exc:
            self.deactivate(token)
            token = None
            self.fail(exc)
            raise
        finally:
            self.deactivate(token)

    async def acall(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        """:meth:`call` for a coroutine function."""
        token = self.activate()
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            self.deactivate(token)
            token = None
            self.fail(exc)
            raise
        finally:
            self.deactivate(token)

    def first_chunk(self) -> None:
        if self.first_chunk_ns is None:
            self.first_chunk_ns = time.monotonic_ns()
            if self.mode != "adopt":  # (a span of ours or one we claimed, never another's)
                self.span.set_attribute(
                    semconv.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, (self.first_chunk_ns - self.started_ns) / 1e9
                )

    # -- end ------------------------------------------------------------------------------------

    def finish(self, result: ModelResult, *, abandoned: bool = False) -> None:
        """Record the result and end the span (once)."""
        if self.ended:
            return
        self.ended = True
        span = self.span
        try:
            if self.mode == "claimed":  # the framework that claimed the span reads it there
                info = _claimed.get(span.get_span_context().span_id)
                if info is not None:
                    info["result"] = result
                return
            if self.mode == "own":
                _set_result_attributes(span, result)
                if abandoned:
                    span.set_attribute(semconv.STREAM_ABANDONED, True)
            elif self.mode == "adopt":
                _fill_absent_result_attributes(span, result)
            self._record_content(result)
        except Exception as exc:  # never into the agent
            internal_error("recording a model call", exc)
        finally:
            if self.mode == "own":
                span.end()

    def fail(self, exc: BaseException, result: ModelResult | None = None) -> None:
        """Record an error (status, ``error.type``, exception event) and end the span (once)."""
        if self.ended:
            return
        self.ended = True
        try:
            if self.mode == "own":
                if result is not None:
                    _set_result_attributes(self.span, result)
                gs.record_error(self.span, exc)
            elif self.mode == "adopt" and result is not None:  # (its error is its package's to record)
                _fill_absent_result_attributes(self.span, result)
            if self.input_messages:
                self._record_content(result or ModelResult(), snapshot=False)
        except Exception as err:
            internal_error("recording a model error", err)
        finally:
            if self.mode == "own":
                self.span.end()

    def _record_content(self, result: ModelResult, snapshot: bool = True) -> None:
        if not self.content or self.mode == "claimed":
            return
        rec = sink.active()
        settings = get_settings()
        span = self.span
        if rec is not None and span.is_recording():
            content: dict[str, Any] = {
                "input_messages": self.input_messages,
                "output_messages": result.output_messages,
            }
            if self.system is not None:
                content["system_instructions"] = self.system
            if self.tool_definitions:
                content["tool_definitions"] = self.tool_definitions
            rec.attach_content(span, content)
            if snapshot and self.snapshot:
                self._snapshot(rec, result)
        if self.mode == "own" and settings.content_captured and span.is_recording():
            self._content_on_span(result, settings.content_on_spans, settings.content_in_events)

    def _snapshot(self, rec: Any, result: ModelResult) -> None:
        inputs = self.input_messages
        if type(inputs) is OwnMessages:  # outputs copied too: the recorder keeps them as they are
            messages: list[Any] = OwnMessages(inputs)
            messages += [dict(m) if type(m) is dict else m for m in result.output_messages]
        else:
            messages = list(inputs) + list(result.output_messages)
        record_snapshot(
            rec,
            self.name,
            messages,
            self.system,
            self.input_messages,
            result.output_messages,
            {
                "type": self.provider,
                "model_id": result.response_model or self.model,
                "provider": self.provider,
            },
            self.span,
            tool_names(self.tool_definitions),
            span_messages=(self.input_messages, result.output_messages),
        )

    def _content_on_span(self, result: ModelResult, on_span: bool, in_events: bool) -> None:
        convert = self.to_semconv or (lambda messages: messages)
        output = [dict(m) if isinstance(m, dict) else m for m in convert(result.output_messages)]
        for i, message in enumerate(output):  # semconv output messages carry their finish reason
            if (
                isinstance(message, dict)
                and "finish_reason" not in message
                and i < len(result.finish_reasons)
            ):
                message["finish_reason"] = result.finish_reasons[i]
        attrs: dict[str, str] = {
            semconv.GEN_AI_INPUT_MESSAGES: json_text(convert(self.input_messages)),
            semconv.GEN_AI_OUTPUT_MESSAGES: json_text(output),
        }
        if self.system is not None:
            system = self.system
            if isinstance(system, str):
                system = [{"type": "text", "content": system}]
            attrs[semconv.GEN_AI_SYSTEM_INSTRUCTIONS] = json_text(system)
        if self.tool_definitions:
            attrs[semconv.GEN_AI_TOOL_DEFINITIONS] = json_text(self.tool_definitions)
        if on_span:
            self.span.set_attributes(attrs)
        if in_events:
            self.span.add_event(DETAILS_EVENT, attrs)


def record_snapshot(
    rec: Any,
    name: str,
    messages: list[Any],
    system: Any,
    input_messages: Sequence[Any],
    output_messages: Sequence[Any],
    model_info: dict[str, Any],
    span: Any,
    tools_loaded: Sequence[str] = (),
    span_messages: tuple[Any, Any] | None = None,
) -> None:
    """An automatic snapshot after a model turn (messages so far, system prompt, last query and
    result, the tools offered). Messages are stored once each by the recorder, so snapshots stay
    small. ``span_messages``: the input and output message lists the span's content holds, when
    ``messages`` is their items and the span ends before they can change (see the recorder's
    ``snapshot``)."""
    extra = {"span_messages": span_messages} if span_messages is not None else {}
    rec.snapshot(
        f"after {name}",
        messages=messages,
        system_prompt=_system_text(system),
        last_query=last_user_text(input_messages),
        last_result=last_result_text(output_messages),
        model_info=model_info,
        tools_loaded=list(tools_loaded),
        span=span if span is not None and span.is_recording() else None,
        auto=True,
        **extra,
    )


def tool_names(definitions: Any) -> list[str]:
    """The names of the tools a request offers, in the shapes the SDKs take: OpenAI chat
    (``{"type": "function", "function": {"name": ...}}``), OpenAI Responses and Anthropic
    (``{"name": ...}``), Strands' tool specs (``{"name": ...}``)."""
    names: list[str] = []
    if not isinstance(definitions, (list, tuple)):
        return names
    for definition in definitions:
        if not isinstance(definition, dict):
            continue
        function = definition.get("function")
        name = function.get("name") if isinstance(function, dict) else definition.get("name")
        if isinstance(name, str) and name:
            names.append(name)
    return names


def _system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    return text_of(system) or json_text(system)


def last_user_text(messages: Sequence[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") in ("user", "human"):
            text = text_of(message.get("content"))
            if text:
                return text
    return None


# The roles the model answers in: OpenAI's, Anthropic's, Bedrock's, Ollama's; Gemini's; LangChain's.
ASSISTANT_ROLES = frozenset(("assistant", "model", "ai"))


def last_result_text(messages: Sequence[Any]) -> str | None:
    """The snapshot's ``last_result``: the text of the last assistant message of a call's output.
    A call's output can hold several rounds (Gemini's automatic function calling: the model's
    "Let me check the weather." and its function call, the function's response, the answer;
    the Responses API's hosted tools between two messages): the answer is the last one, not
    every round's text joined. An output with no assistant role (a framework's own roles): its
    last message's text."""
    last = None
    for message in reversed(messages):
        if isinstance(message, dict):
            role = message.get("role")
            if type(role) is str and role in ASSISTANT_ROLES:
                return text_of(message.get("content")) or None
            if last is None:
                last = message
    return (text_of(last.get("content")) or None) if last is not None else None


def _set_result_attributes(span: Span, result: ModelResult) -> None:
    if not span.is_recording():
        return
    attrs: dict[str, Any] = {}
    for key, value in (
        (semconv.GEN_AI_RESPONSE_MODEL, result.response_model),
        (semconv.GEN_AI_RESPONSE_ID, result.response_id),
        (semconv.GEN_AI_USAGE_INPUT_TOKENS, result.input_tokens),
        (semconv.GEN_AI_USAGE_OUTPUT_TOKENS, result.output_tokens),
        (semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, result.cache_read_tokens),
        (semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, result.cache_creation_tokens),
        (semconv.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, result.reasoning_tokens),
    ):
        if value is not None:
            attrs[key] = value
    tuples: dict[str, Any] = {}
    if result.finish_reasons:
        tuples[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = tuple([str(r) for r in result.finish_reasons])
    if result.tool_calls:  # (no gen_ai.tool.call event each: the same facts, a second time)
        tuples[semconv.TOOL_CALL_IDS] = tuple([cid or "" for cid, _ in result.tool_calls])
        tuples[semconv.TOOL_CALL_NAMES] = tuple([name or "" for _, name in result.tool_calls])
    set_attributes_fast(span, attrs, tuples)


def _fill_absent_result_attributes(span: Span, result: ModelResult) -> None:
    """Another package's model span adopted (Google ADK's ``generate_content``, Pydantic AI's
    ``chat``): the result attributes it lacks — the response id, model, finish reasons, usage the
    package never saw (ADK keeps no response id) and the tool calls' ids — are given; one it has
    keeps the package's value, and an ended span is left alone. Its attributes are read once."""
    if not span.is_recording():  # (ended: the SDK would drop them, with a warning)
        return
    present = getattr(span, "attributes", None) or {}
    absent: dict[str, Any] = {}
    for key, value in (
        (semconv.GEN_AI_RESPONSE_MODEL, result.response_model),
        (semconv.GEN_AI_RESPONSE_ID, result.response_id),
        (semconv.GEN_AI_USAGE_INPUT_TOKENS, result.input_tokens),
        (semconv.GEN_AI_USAGE_OUTPUT_TOKENS, result.output_tokens),
        (semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, result.cache_read_tokens),
        (semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, result.cache_creation_tokens),
        (semconv.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, result.reasoning_tokens),
    ):
        if value is not None and key not in present:
            absent[key] = value
    if result.finish_reasons and semconv.GEN_AI_RESPONSE_FINISH_REASONS not in present:
        absent[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = tuple([str(r) for r in result.finish_reasons])
    if result.tool_calls and semconv.TOOL_CALL_IDS not in present:
        absent[semconv.TOOL_CALL_IDS] = tuple([cid or "" for cid, _ in result.tool_calls])
        absent[semconv.TOOL_CALL_NAMES] = tuple([name or "" for _, name in result.tool_calls])
    if absent:
        span.set_attributes(absent)


def begin(
    provider: str,
    operation: str,
    model: str | None,
    params: dict[str, Any] | None = None,
    *,
    stream: bool = False,
    tracer: trace.Tracer | None = None,
) -> ModelCall | None:
    """Start recording a model call, or ``None`` when this call must not be recorded here
    (instrumentation suppressed, or a framework span of ours already describes it). ``tracer``
    is the calling instrumentor's (its ``tracer_provider``)."""
    if not is_instrumentation_enabled():
        return None
    current = trace.get_current_span()
    if current.is_recording() and is_model_span(current):
        info = _claimed.get(current.get_span_context().span_id)
        if info is not None:
            info.setdefault("provider", provider)
            info.setdefault("model", model)
            if stream:  # a framework's call that streams inside (LangGraph's invoke, Strands)
                current.set_attribute(semconv.GEN_AI_REQUEST_STREAM, True)
            return ModelCall(current, "claimed", provider, operation, model)
        if _is_ours(current):
            return None
        return ModelCall(current, "adopt", provider, operation, model)
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: operation,
        semconv.GEN_AI_PROVIDER_NAME: provider,
    }
    if model:
        attrs[semconv.GEN_AI_REQUEST_MODEL] = model
    if stream:
        attrs[semconv.GEN_AI_REQUEST_STREAM] = True
    if params:
        attrs.update(params)
    name = f"{operation} {model}" if model else operation
    span = (tracer or _get_tracer()).start_span(name, kind=SpanKind.CLIENT, attributes=attrs)
    return ModelCall(span, "own", provider, operation, model)
