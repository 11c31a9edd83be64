"""Which span attributes and event attributes carry message text, whoever wrote them.

One rule set for the session files' shareable tier (:mod:`otel_agent_trace.recording.tiers`;
on the span hot path the redactor applies it per key, :meth:`Redactor.redact_span_hiding_text`)
and for the OTLP stream (:mod:`otel_agent_trace.recording.forwarding`), so the two cannot
disagree. Message text is what a user or a model said:
prompts, answers, system instructions, agent inputs and outputs, tool messages. Where it is not
to be shared, it is reduced to its length and SHA-256 (:func:`digest`).

Sources covered: the GenAI semantic conventions (``gen_ai.input.messages`` …), Strands' own span
events (``gen_ai.user.message`` … with ``content`` / ``message``), OpenInference (``input.value``,
``llm.input_messages.*``) and OpenLLMetry (``gen_ai.prompt.*``, ``gen_ai.completion.*``).
The check is a dict lookup per key (each key judged once, by a set lookup and a prefix test).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_agent_trace import session_format as fmt

# Attributes (on spans and on any event) whose whole value is message text.
TEXT_ATTRIBUTES = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.prompt",  # OpenLLMetry / older semconv, unindexed
        "gen_ai.completion",
        "input.value",  # OpenInference
        "output.value",
        "llm.prompts",
        "llm.prompt_template.template",
        "llm.prompt_template.variables",
    }
)
# Indexed families (``llm.input_messages.0.message.content``, ``gen_ai.prompt.0.content``): every
# key under them is message text, except the structural leaves below.
TEXT_ATTRIBUTE_PREFIXES = (
    "llm.input_messages.",
    "llm.output_messages.",
    "gen_ai.prompt.",
    "gen_ai.completion.",
)
STRUCTURAL_LEAVES = frozenset({"role", "finish_reason", "type", "id", "name", "mime_type"})

# Events whose ``content`` / ``message`` attributes are message text (Strands' own events; the
# GenAI event names of semantic conventions ≤ 1.36; Strands' memory events hold stored text).
MESSAGE_EVENTS = frozenset(
    {
        "gen_ai.user.message",
        "gen_ai.system.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "memory.query",
        "memory.results",
        "memory.content",
    }
)
MESSAGE_EVENT_ATTRIBUTES = frozenset({"content", "message", "tool.result"})

# Content keys our capture hands the recorder (``attach_content``) that are message text.
TEXT_CONTENT_KEYS = frozenset(
    {"system_instructions", "system_prompt", "last_query", "last_result", "agent_input", "agent_output"}
)


def is_text_attribute(key: str) -> bool:
    """Whether a span or event attribute holds message text (wherever it appears)."""
    if key in TEXT_ATTRIBUTES:
        return True
    if key.startswith(TEXT_ATTRIBUTE_PREFIXES):
        return key.rpartition(".")[2] not in STRUCTURAL_LEAVES
    return False


class _KeyMemo(dict):
    """``is_text_attribute`` per key, remembered (bounded: indexed keys are many)."""

    def __missing__(self, key: str) -> bool:
        found = is_text_attribute(key)
        if len(self) < 4096:
            self[key] = found
        return found


_memo = _KeyMemo()
# Whether any key of a mapping holds message text: ``any(map(is_text_key, attributes))`` runs in C
# for keys seen before (the hot path of every span).
is_text_key = _memo.__getitem__


def text_keys(attributes: Mapping[str, Any], event: str | None = None) -> list[str]:
    """The keys of ``attributes`` (of a span, or of an event named ``event``) holding message text."""
    if event is not None and event in MESSAGE_EVENTS:
        return [k for k in attributes if k in MESSAGE_EVENT_ATTRIBUTES or is_text_key(k)]
    return [k for k in attributes if is_text_key(k)]


def digest(value: Any) -> dict[str, Any]:
    """What the shareable tier keeps of message text: its length and SHA-256."""
    return {"chars": fmt.content_chars(value), "sha256": fmt.content_sha256(value)}


def digest_text(value: Any) -> str:
    """:func:`digest` as one attribute value (OTLP attributes are scalars or lists of them)."""
    return f"<content chars={fmt.content_chars(value)} sha256={fmt.content_sha256(value)}>"


def without_text(
    attributes: Mapping[str, Any], event: str | None = None, *, as_text: bool = False
) -> Mapping[str, Any]:
    """``attributes`` with each message-text value reduced to its digest (a dict, or with
    ``as_text`` a string); the same mapping when it holds none."""
    keys = text_keys(attributes, event)
    if not keys:
        return attributes
    reduce = digest_text if as_text else digest
    out = dict(attributes)
    for key in keys:
        value = out[key]
        if value is not None:
            out[key] = reduce(value)
    return out
