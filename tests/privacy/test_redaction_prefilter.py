"""The redactor's fast paths never change a result (hypothesis): with its "nothing to redact
here" check (RE2) and without it, every text, value, preview and set of span attributes is
redacted alike; the key rules searched only near key words find what a scan of the whole line
finds; and typical clean text skips the rules."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from otel_agent_trace.redaction import Redactor

ENV = {
    "OPENAI_API_KEY": "sk-proj-Q1w2E3r4T5y6U7i8O9p0",
    "DB_PASSWORD": "hunter2hunter2",
    "SERVICE_TOKEN": "tok-77aa88bb99cc",
}
HOME = "/home/alice"
FAST = Redactor(env=ENV, home=HOME)
SLOW = Redactor(env=ENV, home=HOME, prefilter=False)

# Key words in every spelling the rules split (camelCase, snake, kebab, dotted, spaced), their
# near misses, the separators and quotes around them, and characters whose case folding is odd.
KEY_PARTS = [
    "api",
    "Api",
    "API",
    "key",
    "Key",
    "KEY",
    "\u212aey",
    "apikey",
    "apiKey",
    "API_KEY",
    "api__key",
    "api key",
    "Api-Key",
    "private",
    "PrivateKey",
    "access",
    "secret",
    "Secret",
    "secrets",
    "client",
    "set",
    "cookie",
    "Cookie",
    "session",
    "Session",
    "sess",
    "sessionid",
    "token",
    "Token",
    "TOKEN",
    "tokens",
    "Tokens",
    "tokenizer",
    "signing",
    "sig",
    "signature",
    "design",
    "encryption",
    "master",
    "account",
    "pass",
    "passes",
    "Passwd",
    "password",
    "pa\u017fsword",
    "passphrase",
    "pwd",
    "PWD",
    "auth",
    "author",
    "authorization",
    "Authorize",
    "credential",
    "credentials",
    "jwt",
    "dsn",
    "otp",
    "bearer",
    "Bearer",
    "Basic",
    "monkey",
    "max",
]
SEPARATORS = [
    "=",
    ":",
    ": ",
    " = ",
    '"',
    "'",
    "\\",
    '\\"',
    " ",
    "\t",
    "\n",
    "-",
    "--",
    ".",
    "_",
    "?",
    "&",
    ";",
    ",",
    "(",
    ")",
    "{",
    "}",
    "/",
    "@",
    "://",
    "https://",
    "\u0130",
    "\u00fc",
    "\ud800",
]
VALUES = [*ENV.values(), "hunter22", "x", "abc123def456", "sk-ant-abcdefghij", "ghp_", "eyJabcdef",
          "AKIAABCDEFGHIJKLMNOP", "<redacted:key:x>", "<redacted:", HOME, HOME + "/x.py"]  # fmt: skip
texts = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.one_of(st.sampled_from(KEY_PARTS), st.sampled_from(SEPARATORS), st.sampled_from(VALUES)),
        max_size=20,
    ).map("".join),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)),
    max_leaves=12,
)
SETTINGS = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_check_is_in_use():
    assert FAST._prefilter is not None and SLOW._prefilter is None


@SETTINGS
@given(texts)
def test_texts_are_redacted_alike_with_and_without_the_check(text):
    assert FAST.redact_text(text) == SLOW.redact_text(text)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.integers(min_value=16, max_value=300))
def test_values_and_previews_are_redacted_alike(value, limit):
    assert FAST.redact(value) == SLOW.redact(value)
    assert FAST.redact_preview(value, limit) == SLOW.redact_preview(value, limit)


def _tool_output(rng: random.Random) -> str:
    """Lines like a tool's output: code, JSON, logs, prose (the benchmark's kind of text)."""
    words = ["the", "key", "token", "budget", "passes", "config", "read", "handler", "retry"]
    lines = []
    for _ in range(rng.randint(5, 40)):
        w = [rng.choice(words) for _ in range(4)]
        n = rng.randint(0, 999)
        lines.append(
            rng.choice(
                [
                    f"    {w[0]}_{w[1]} = {w[2]}({w[3]}, retries={n % 7})",
                    f'{{"id": {n}, "name": "{w[0]}", "path": "{HOME}/project/{w[1]}.py"}}',
                    f"2024-05-01 12:{n % 60:02d}:07 INFO {w[0]} {w[1]} in {n} ms",
                    f"def {w[0]}_{w[1]}(self, key: str, timeout: int = 30) -> bool:",
                    f"    max_tokens = {n}  # {w[2]} token budget",
                    f"export API_KEY={w[0]}{n}",
                    f"curl -H 'Authorization: Bearer {w[1]}{n:04d}abcd' --password {w[2]}",
                    f'"client_secret": "{w[3]}{n}", "sessionToken": "{n}"',
                ]
            )
        )
    return "\n".join(lines)


def test_tool_output_is_redacted_alike_and_clean_lines_skip_the_rules():
    rng = random.Random(7)
    for _ in range(200):
        text = _tool_output(rng)
        assert FAST.redact_text(text) == SLOW.redact_text(text)
        assert FAST.redact_preview(text, 500) == SLOW.redact_preview(text, 500)
    for clean in (
        "def read_config(self, key: str, timeout: int = 30) -> bool:",
        "    max_tokens = 42  # the read token budget",
        '{"id": 3, "name": "retry", "path": "/home/alice/project/x.py"}',
        "the test suite passes after the change",
    ):
        assert FAST._prefilter(clean), clean


# Span attributes: keys as instrumentations write them and as secrets hide in them; values as
# OTel allows them (scalars and flat sequences), command lines with flags among them.
ATTRIBUTE_KEYS = ["url.full", "process.command_args", "gen_ai.tool.call.id", "db.statement",
                  "http.request.header.authorization", "gen_ai.usage.input_tokens", "otp", "pin.code",
                  "user.password"]  # fmt: skip
FLAGS = ["--password", "-p", "--api-key", "--token", "--stat", "--pa\u017fsword", "-\u212aey"]
attribute_keys = st.one_of(
    st.sampled_from(ATTRIBUTE_KEYS),
    st.lists(st.sampled_from([*KEY_PARTS, "http", "header", "x"]), min_size=1, max_size=3).map(".".join),
    texts,
)
flags = st.lists(st.one_of(st.sampled_from(FLAGS), texts), max_size=5)
paths = st.sampled_from([HOME, HOME + "/src/app.py", "file://" + HOME + "/a", "line one\nline two",
                         "cd " + HOME + "\nls", "/srv" + HOME, "/hm", "/hm/a", "x /hm"])  # fmt: skip
attribute_values = st.one_of(
    texts,
    paths,
    st.lists(st.one_of(paths, texts), max_size=3).map(tuple),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.one_of(texts, st.integers(), st.booleans()), max_size=4),
    st.lists(texts, max_size=4).map(tuple),
    flags,
    flags.map(tuple),
)


SHORT_HOME = (Redactor(env=ENV, home="/hm"), Redactor(env=ENV, home="/hm", prefilter=False))


@SETTINGS
@given(st.dictionaries(attribute_keys, attribute_values, max_size=8))
@example({"~": "x" * 8, HOME: ["y"]})  # two keys shown as one ("~"): the later one wins
@example({"~": "x" * 8, HOME: "/"})
def test_span_attributes_are_redacted_alike_with_and_without_the_check(attributes):
    for fast_redactor, slow_redactor in ((FAST, SLOW), SHORT_HOME):  # text under 5 keeps "/hm"
        fast = fast_redactor.redact_attributes(attributes)
        assert fast == slow_redactor.redact_attributes(attributes)
        assert list(fast) == list(slow_redactor.redact_attributes(attributes))  # in the same order
        assert fast_redactor.redact_attributes(attributes) == fast  # and again, from the memo


# Lines built the way key rules read them: a key between quotes (escaped or not) or after dashes,
# a separator, a value (quoted or not, a marker holding a key), one after another.
QUOTES = ["", '"', "'", '\\"', '\\\\"', '\\\\\\"']
keys = st.lists(st.sampled_from(KEY_PARTS), min_size=1, max_size=3).map("_".join)
pairs = st.builds(
    "{0}{1}{2}{1}{3}{4}{5}{4}".format,
    st.sampled_from(["", " ", "-", "--", "&", "?", "(", "//", "@", "x", "<redacted:"]),
    st.sampled_from(QUOTES),
    keys,
    st.sampled_from(["=", ":", ": ", " = ", " ", "\t:"]),
    st.sampled_from(QUOTES),
    st.one_of(st.sampled_from([*VALUES, "<redacted:api_key=abcdef1>", "Bearer abcdefgh1", "a b"]), texts),
)
keyed_texts = st.lists(st.one_of(pairs, st.sampled_from(SEPARATORS)), max_size=6).map("".join)


@SETTINGS
@given(st.one_of(texts, keyed_texts))
def test_key_rules_searched_near_key_words_find_what_a_scan_of_the_line_finds(text):
    from otel_agent_trace.redaction.patterns import KEYED_RE as _KEYED_RE

    for line in text.split("\n"):
        assert FAST._keyed_line(line, line.lower()) == _KEYED_RE.sub(FAST._replace, line)


@SETTINGS
@given(st.lists(st.one_of(texts, keyed_texts), min_size=1, max_size=4).map("\n".join))
def test_key_rules_on_the_lines_of_a_text_as_on_each_line_alone(text):
    from otel_agent_trace.redaction.credentials import secret_key_at as _secret_key_at
    from otel_agent_trace.redaction.patterns import KEY_NEEDLES as _KEY_NEEDLES
    from otel_agent_trace.redaction.patterns import KEYED_RE as _KEYED_RE

    low = text.lower()
    if len(low) != len(text):
        return
    selected = set()
    for word in _KEY_NEEDLES:
        i = low.find(word)
        while i != -1:
            if _secret_key_at(text, i, len(word)):
                selected.add(text.count("\n", 0, i))
            i = low.find(word, i + 1)
    lines = text.split("\n")
    expected = "\n".join(_KEYED_RE.sub(FAST._replace, x) if n in selected else x for n, x in enumerate(lines))
    assert FAST._keyed_lines(text, low) == expected
