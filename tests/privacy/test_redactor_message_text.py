"""The redactor judges message text per key (the shareable tier's span hot path): with
``redact_span_hiding_text`` a message-text value becomes its length and SHA-256 however it was
seen before, in both the prefiltered and the memoised (user-pattern) paths."""

from __future__ import annotations

import pytest

from otel_agent_trace import message_text
from otel_agent_trace.redaction import Redactor

PROMPT = "Summarise the quarterly numbers for Ravenswood"
TEXT_ATTRIBUTES = {
    "gen_ai.input.messages": PROMPT,
    "input.value": PROMPT,
    "llm.input_messages.0.message.content": PROMPT,
    "gen_ai.prompt.0.content": PROMPT,
}


@pytest.fixture(params=["prefilter", "user-patterns"])
def redactor(request):
    r = Redactor()
    if request.param == "user-patterns":
        r.add_pattern(r"ZZZ-[0-9]+")  # user patterns take the memoised path
    return r


@pytest.mark.parametrize("key", sorted(TEXT_ATTRIBUTES))
def test_message_text_is_hidden_even_after_being_seen_in_full(redactor, key):
    attrs = {key: PROMPT, "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 12}
    for _ in range(3):  # kept (content capture on): the text is shown, and seen
        assert redactor.redact_span("chat", attrs)[1][key] == PROMPT
    for _ in range(2):
        name, shown = redactor.redact_span_hiding_text("chat", attrs)
        assert name == "chat"
        assert shown[key] == message_text.digest(PROMPT)
        assert shown["gen_ai.request.model"] == "gpt-4o-mini"
        assert shown["gen_ai.usage.input_tokens"] == 12
    assert redactor.redact_span("chat", attrs)[1][key] == PROMPT  # and shown again when kept


def test_structural_leaves_and_other_keys_stay(redactor):
    attrs = {
        "llm.input_messages.0.message.role": "user",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.tool.name": "read_file",
        "gen_ai.input.messages": None,
    }
    shown = redactor.redact_span_hiding_text("chat", attrs)[1]
    assert shown == attrs


def test_secrets_in_kept_message_text_are_still_redacted(redactor):
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    attrs = {"gen_ai.input.messages": f"my key is {secret}"}
    for _ in range(2):
        assert secret not in str(redactor.redact_span("chat", attrs)[1])
