"""Automatic function calling (AFC): google-genai calls the Python functions given as tools itself,
inside ``generate_content``, and sends their results back to the model.

Each such call is an ``execute_tool {name}`` span under the model call's span: the SDK reads a
response's function calls in ``_extra_utils.get_function_response_parts`` (``_async``), which
calls each function through ``invoke_function_from_dict_args`` (``_async``; a sync function from
the async client through ``asyncio.to_thread``, which copies the context). The first wrapper
keeps the response's calls (name, id, arguments) in a context variable; the second starts the
span of the next pending call of that function's name, with the model's call id when it gave
one, the arguments and the function's return value (or its exception, which the SDK turns into an
``{"error": ...}`` response: re-raised unchanged). Under a model replay with recorded tools, the
recorded result is returned and the function is not called."""

from __future__ import annotations

import inspect
from contextvars import ContextVar
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal.genai_spans import import_path_of
from otel_agent_trace._internal.guard import never_raise
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.context.tool_calls import ToolCall, start_tool_call

MODULE = "google.genai._extra_utils"

# the function calls of the response being answered: (name, call id) in order, taken as called
_pending: ContextVar[list[tuple[str, str | None]] | None] = ContextVar("agent_trace_gemini_afc", default=None)


@never_raise("google-genai function calls", default=None)
def _calls_of(response: Any) -> list[tuple[str, str | None]] | None:
    candidates = getattr(response, "candidates", None) or ()
    content = getattr(candidates[0], "content", None) if candidates else None
    calls = []
    for part in getattr(content, "parts", None) or ():
        call = getattr(part, "function_call", None)
        name = getattr(call, "name", None)
        if isinstance(name, str):
            call_id = getattr(call, "id", None)
            calls.append((name, call_id if isinstance(call_id, str) and call_id else None))
    return calls


def _next_id(name: str) -> str | None:
    pending = _pending.get()
    if pending:
        for i, (pending_name, call_id) in enumerate(pending):
            if pending_name == name:
                del pending[i]
                return call_id
    return None


def responses_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``get_function_response_parts(response, function_map)``."""
    token = _pending.set(_calls_of(args[0] if args else kwargs.get("response")))
    try:
        return wrapped(*args, **kwargs)
    finally:
        _pending.reset(token)


async def async_responses_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``get_function_response_parts_async(response, function_map)``."""
    token = _pending.set(_calls_of(args[0] if args else kwargs.get("response")))
    try:
        return await wrapped(*args, **kwargs)
    finally:
        _pending.reset(token)


def _outcome(result: Any) -> tuple[Any, str | None]:
    return jsonable(result), None


def _description(function: Any) -> str | None:
    doc = inspect.getdoc(function)
    return doc.split("\n\n")[0] if doc else None


@never_raise("google-genai function call start", default=None)
def _start(patches: Patches, args: Any, kwargs: Any) -> ToolCall | None:
    arguments = args[0] if args else kwargs.get("args")
    function = args[1] if len(args) > 1 else kwargs.get("function_to_invoke")
    name = getattr(function, "__name__", None)
    if not isinstance(name, str):
        return None
    return start_tool_call(
        name,
        tracer=patches.tracer(),
        call_id=_next_id(name),
        description=_description(function),
        import_path=import_path_of(function),
        arguments=jsonable(arguments),
    )


def _recorded(call: ToolCall) -> tuple[bool, Any]:
    """Under a model replay with ``--tools recorded``: the recorded result (the function is not called)."""
    attributes = getattr(call.span, "attributes", None) or {}
    name = str(attributes.get(semconv.GEN_AI_TOOL_NAME))
    return _replay.answer_call(call, name, attributes.get(semconv.GEN_AI_TOOL_CALL_ID))


def invoke_wrapper(patches: Patches) -> Any:
    """``invoke_function_from_dict_args(args, function_to_invoke)``."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(patches, args, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, result = _recorded(call)
            if found:
                return result
        return call.run(wrapped, args, kwargs, _outcome)

    return wrapper


def async_invoke_wrapper(patches: Patches) -> Any:
    """``invoke_function_from_dict_args_async(args, function_to_invoke)``."""

    async def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        call = _start(patches, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        if _replay.player is not None:
            found, result = _recorded(call)
            if found:
                return result
        return await call.arun(wrapped, args, kwargs, _outcome)

    return wrapper
