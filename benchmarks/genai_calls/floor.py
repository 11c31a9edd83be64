"""A reference, not a product: about the least an instrumentation can do for one chat call.

``floor-spans``: one wrapt wrapper on ``Completions.create`` (not streamed), one CLIENT span
with the attributes contrib ``openai-v2`` sets (operation, provider, request model and
temperature, server address and port; response model, id, finish reasons, token usage), no
content, no HTTP layer. ``floor``: the same, plus one crash-safe line per call in a session file
(orjson, ``os.write`` on ``O_APPEND``, written when the span ends): the span's ids, name, times
and attributes, and for the call's new question and its answer the role, the length and SHA-256
of the content (what ours' trace tier keeps of a message).

What it leaves out, that ours does: a line when a call starts, a message known again by its
digest, a snapshot, the span tree's entry ids and parents, redaction, tiers, every other client,
framework and streaming, guards against raising into the agent. So it is a lower bound for "the
session file on", used to tell what the goal's arithmetic allows from what ours spends.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import orjson
import wrapt
from opentelemetry import trace
from opentelemetry.trace import SpanKind


def _digest(message: Any) -> dict[str, Any]:
    if type(message) is dict:
        role, content = message.get("role"), message.get("content")
    else:
        role, content = getattr(message, "role", None), getattr(message, "content", None)
    text = content if type(content) is str else orjson.dumps(content).decode()
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {"role": role, "content_chars": len(text), "content_sha256": digest}


def install(provider: Any, path: str | None) -> None:
    """Wrap ``Completions.create``; with ``path``, write a line per call there."""
    from openai.resources.chat.completions import Completions

    tracer = provider.get_tracer("floor")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600) if path else None

    def create(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        if kwargs.get("stream"):
            raise NotImplementedError("the floor reference measures chat calls only, not streamed")
        model = kwargs.get("model")
        url = instance._client.base_url
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "server.address": url.host,
            "server.port": url.port,
        }
        temperature = kwargs.get("temperature")
        if temperature is not None:
            attributes["gen_ai.request.temperature"] = temperature
        span = tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
        try:
            with trace.use_span(span, end_on_exit=False):
                result = wrapped(*args, **kwargs)
        except BaseException as error:
            span.record_exception(error)
            span.end()
            raise
        usage = result.usage
        done = {
            "gen_ai.response.model": result.model,
            "gen_ai.response.id": result.id,
            "gen_ai.response.finish_reasons": [choice.finish_reason for choice in result.choices],
            "gen_ai.usage.input_tokens": usage.prompt_tokens,
            "gen_ai.usage.output_tokens": usage.completion_tokens,
        }
        span.set_attributes(done)
        span.end()
        if fd is not None:
            context = span.get_span_context()
            messages = kwargs.get("messages") or [None]
            entry = {
                "type": "span.end",
                "trace_id": f"{context.trace_id:032x}",
                "span_id": f"{context.span_id:016x}",
                "name": span.name,
                "ts": span.start_time,
                "duration_ns": span.end_time - span.start_time,
                "attributes": {**attributes, **done},
                "messages": [_digest(messages[-1]), _digest(result.choices[0].message)],
            }
            os.write(fd, orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
        return result

    wrapt.wrap_function_wrapper(Completions, "create", create)
