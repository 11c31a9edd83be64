"""Request parameters → ``gen_ai.request.*`` attributes, and small request readers (all SDKs)."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.jsonable import is_given
from otel_agent_trace.session_format.messages import parse_arguments  # noqa: F401 (re-exported)

_NUMERIC = (
    ("temperature", semconv.GEN_AI_REQUEST_TEMPERATURE),
    ("top_p", semconv.GEN_AI_REQUEST_TOP_P),
    ("max_tokens", semconv.GEN_AI_REQUEST_MAX_TOKENS),
    ("max_completion_tokens", semconv.GEN_AI_REQUEST_MAX_TOKENS),
    ("max_output_tokens", semconv.GEN_AI_REQUEST_MAX_TOKENS),
    ("frequency_penalty", semconv.GEN_AI_REQUEST_FREQUENCY_PENALTY),
    ("presence_penalty", semconv.GEN_AI_REQUEST_PRESENCE_PENALTY),
    ("seed", semconv.GEN_AI_REQUEST_SEED),
    ("top_k", semconv.GEN_AI_REQUEST_TOP_K),
)


_NUMERIC_KEYS = frozenset(key for key, _ in _NUMERIC)


def request_params(kwargs: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if not _NUMERIC_KEYS.isdisjoint(kwargs):  # (most calls pass one or two of them, or none)
        for key, attr in _NUMERIC:
            value = kwargs.get(key)
            if is_given(value) and isinstance(value, (int, float)) and not isinstance(value, bool):
                attrs[attr] = value
    n = kwargs.get("n")
    if is_given(n) and isinstance(n, int) and n != 1:
        attrs[semconv.GEN_AI_REQUEST_CHOICE_COUNT] = n
    stop = kwargs.get("stop", kwargs.get("stop_sequences"))
    if is_given(stop):
        if isinstance(stop, str):
            attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [stop]
        elif isinstance(stop, (list, tuple)):
            attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [str(s) for s in stop]
    return attrs


def model_of(kwargs: dict[str, Any]) -> str | None:
    model = kwargs.get("model")
    return model if isinstance(model, str) else None


def stream_flag(kwargs: dict[str, Any]) -> bool:
    return kwargs.get("stream") is True


def messages_list(value: Any) -> list[Any] | None:
    """The messages when they are a list we may read (never consume a caller's iterator): the
    caller's own list, read at once and not kept (a long conversation is not copied)."""
    if type(value) is list:
        return value
    return list(value) if isinstance(value, (list, tuple)) else None
