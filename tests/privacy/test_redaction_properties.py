"""Properties of redaction (hypothesis): it never raises, it is idempotent, and a planted secret
is removed wherever in random text it is put."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_agent_trace.redaction import Redactor

ENV = {
    "OPENAI_API_KEY": "sk-proj-Q1w2E3r4T5y6U7i8O9p0",
    "DB_PASSWORD": "hunter2hunter2",
    "SERVICE_TOKEN": "tok-77aa88bb99cc",
}
HOME = "/home/alice"
REDACTOR = Redactor(env=ENV, home=HOME, patterns=[r"EMP-\d{3,6}"])

# Pieces that make the rules fire and interact: markers, quotes, separators, keys, shapes.
FRAGMENTS = [
    *ENV.values(),
    "sk-",
    "sk-ant-",
    "ghp_",
    "AKIA",
    "xoxb-",
    "eyJ",
    "Bearer ",
    "bearer\t",
    "Basic ",
    "://",
    "@",
    "?",
    "&",
    "=",
    ": ",
    '"',
    "'",
    "\\",
    '\\"',
    "{",
    "}",
    "[",
    "]",
    ",",
    " ",
    "\n",
    "-",
    "--",
    "--password ",
    "api_key",
    "token",
    "Authorization",
    "Cookie: ",
    "password=",
    '"secret": "',
    "<redacted:",
    "<redacted:env:X>",
    ">",
    "<",
    "~",
    "/home/alice",
    "/home/alice/",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "EMP-1234",
    "https://",
    "file://",
    "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
]
texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=25).map("".join),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(
            st.one_of(texts, st.sampled_from(["api_key", "password", "headers", "q"])), children, max_size=5
        ),
    ),
    max_leaves=20,
)
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(texts)
def test_text_never_raises_and_is_idempotent(text):
    once = REDACTOR.redact_text(text)
    assert isinstance(once, str)
    assert REDACTOR.redact_text(once) == once


@SETTINGS
@given(json_values)
def test_json_like_values_never_raise_and_are_idempotent(value):
    once = REDACTOR.redact(value)
    assert REDACTOR.redact(once) == once
    json.dumps(once)  # still JSON


@SETTINGS
@given(json_values, st.integers(min_value=16, max_value=600))
def test_previews_are_bounded_and_idempotent(value, limit):
    once = REDACTOR.redact_preview(value, limit)
    if isinstance(once, str):
        assert len(once) <= limit + 200  # the cut never ends inside a marker; the size note is short
        assert REDACTOR.redact_text(once) == once


SHAPED = st.one_of(
    st.sampled_from(list(ENV.values())),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=20, max_size=40).map(
        lambda s: "sk-" + s
    ),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=36, max_size=36).map(
        lambda s: "ghp_" + s
    ),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
)
SEPARATORS = st.sampled_from([" ", "\n", "\t", '"', "'", "(", ")", ",", ";", "=", ": ", "/", "[", "]"])


@SETTINGS
@given(texts, SEPARATORS, SHAPED, SEPARATORS, texts)
def test_planted_secret_in_random_text_is_removed(prefix, left, secret, right, suffix):
    out = REDACTOR.redact_text(prefix + left + secret + right + suffix)
    assert secret not in out


@SETTINGS
@given(json_values, SHAPED, st.sampled_from(["api_key", "note", "args", "Authorization", "x"]))
def test_planted_secret_in_nested_values_is_removed(value, secret, key):
    nested = {"outer": [value, {key: f"value {secret} end"}], "json": json.dumps({key: secret})}
    assert secret not in json.dumps(REDACTOR.redact(nested))
