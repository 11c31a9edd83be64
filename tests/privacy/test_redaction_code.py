"""Rules that keep code and documentation of the Python standard library intact (issue 39), and
the secrets the same rules must still remove. Each case failed before its rule was fixed."""

from __future__ import annotations

import pytest

from otel_agent_trace.redaction import Redactor

HOME = "/home/alice"


@pytest.fixture(params=[True, False], ids=["prefilter", "rules"])
def r(request) -> Redactor:
    return Redactor(env={}, home=HOME, prefilter=request.param)


# --- a value never starts at the quote that ends the string its key is in -----------------------

KEPT_QUOTES = [
    # http/cookies.py: the key opens a string, the value's "quote" is that string's end
    'def output(self, attrs=None, header="Set-Cookie:", sep="\\015\\012"):',
    "def output(self, attrs=None, header='Set-Cookie:', sep='\\015\\012'):",
    'print("--password=", "x y z")',
    # an escaped quote does not end a value: the value runs to the real end
    'document.cookie = "Customer=\\"WILE_E_COYOTE\\"; Path=/acme; Version=1";',
]


@pytest.mark.parametrize("line", KEPT_QUOTES)
def test_a_value_does_not_cross_the_end_of_its_keys_string(r, line):
    assert r.redact_text(line) == line


def test_a_secret_after_a_key_that_ends_its_string_is_still_found(r):
    # Before, the token's "value" was `", password="` and the password after it was left.
    out = r.redact_text('f("token:", password="Tr0ub4dor&3")')
    assert "Tr0ub4dor&3" not in out
    assert out == 'f("token:", password="<redacted:key:password>")'


def test_a_quoted_value_runs_past_an_escaped_quote(r):
    # Before, the value was `"abc\"`, under 6 characters: kept, and the rest of the secret too.
    out = r.redact_text('token = "abc\\"Xy9!kQ2#mZ"')
    assert "Xy9" not in out and out == 'token = "<redacted:key:token>"'


@pytest.mark.parametrize(
    "line",
    [
        'header = "Authorization: Basic dXNlcjpwYXNz"',
        "PASSWORD='s3cr3t!pw'",
        'PASSWORD="s3cr3t!pw"',
        '{"password": "s3cr3t!pw"}',
    ],
)
def test_keys_and_values_in_one_string_still_go(r, line):
    assert "dXNlcjpwYXNz" not in r.redact_text(line) and "s3cr3t!pw" not in r.redact_text(line)


# --- numbers: hex constants, OIDs, versions are numbers, not tokens ------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "_DD_SIGNATURE = 0x08074b50",  # zipfile.py
        "CameraCalibrationSignature = 0xC6F3",  # PIL/ExifTags.py
        "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",  # ssl.py: an OID
        'serverAuth = "1.3.6.1.5.5.7.3.1"',
        "auth_host = 10.0.0.1",
        "token_mask = 0xFFFF_FFFF_FFFF_FFFF",
    ],
)
def test_hex_constants_and_dotted_numbers_are_numbers(r, line):
    assert r.redact_text(line) == line


@pytest.mark.parametrize(
    "line",
    [
        "SECRET = 0xDEADBEEF1",  # a secret's numbers are secret (as password = 1234)
        "signing_key = 0x2b7e151628aed2a6abf7158809cf4f3c",  # longer than a machine word: key material
        "auth_token = 8a477f597d28d172",  # hex without 0x: a digest, a token
        "pin_secret = '1.2.3.4.5.6'",
    ],
)
def test_numbers_that_are_still_secrets(r, line):
    assert "<redacted:key:" in r.redact_text(line)


# --- cookies: judged pair by pair ----------------------------------------------------------------

KEPT_COOKIES = [
    # http/cookies.py docstrings
    "'Set-Cookie: fig=newton\\r\\nSet-Cookie: sugar=wafer'",
    "Cookie: rocky=road; Path=/cookie",
    'Set-Cookie: keebler="E=everybody; L=\\"Loves\\"; fudge=\\012;"',
    "Set-Cookie: oreo=doublestuff; Path=/",
    # test/test_http_cookiejar.py, test/test_http_cookies.py
    'headers = ["Set-Cookie: PART_NUMBER=ROCKET_LAUNCHER_0001; path=/"]',
    "#       Set-Cookie: CUSTOMER=WILE_E_COYOTE; path=/; expires=Wednesday, 09-Nov-99 23:12:40 GMT",
    '#       Cookie: $Version="1"; Customer="WILE_E_COYOTE"; $Path="/acme"',
    "'Set-Cookie: Customer=\"WILE_E_COYOTE\"; Path=/acme')",
    'headers.append("Set-Cookie: p1=perm; Domain=.perlmeister.com;"',
    'headers = ["Set-Cookie: session=narf; secure; path=/"]',
    "'repr': \"<SimpleCookie: chips='ahoy' vienna='finger'>\",",
    'document.cookie = "theme=dark; lang=en"',
]


@pytest.mark.parametrize("line", KEPT_COOKIES)
def test_cookies_of_words_and_names_are_kept(r, line):
    assert r.redact_text(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("Cookie: sessionid=abc; csrftoken=xyz", "abc"),  # a secret-looking name: any value
        ("Set-Cookie: sid=8f3a9c2b1d4e5f60718293a4b5c6d7e8; Path=/", "8f3a9c2b1d4e"),  # generated
        ("Set-Cookie: theme=dark; uid=Zm9vYmFyYmF6cXV4MTIz; Path=/", "Zm9vYmFy"),
        # quoted: before, the value stopped at the quote and the token after it was left
        ('Set-Cookie: auth="Zm9vYmFyYmF6cXV4MTIz"; HttpOnly', "Zm9vYmFy"),
        ('document.cookie = "sessionid=q8Zk2LmP0x; path=/"', "q8Zk2LmP0x"),
        ('headers.append("Set-Cookie: JSESSIONID=ABCDERANDOM123; Path=")', "ABCDERANDOM123"),
    ],
)
def test_cookies_holding_a_credential_go(r, line, secret):
    out = r.redact_text(line)
    assert secret not in out and "<redacted:key:" in out


# --- algorithm names, lookup keys, short numbers in URLs, user names ----------------------------


@pytest.mark.parametrize(
    "line",
    [
        "capabilities = 'LOGINDISABLED AUTH=CRAM-MD5'",  # test_imaplib: an algorithm's name
        'text = self.call_url_handler("search?key=test_error_package",',  # test_pydoc: a lookup key
        '("get?key=pydoc", "Pydoc: module pydoc"),',
        '("topic?key=def", "Pydoc: KEYWORD def"),',
        'self.checkReqURI("http://127.0.0.1/spammity/spam;cookie=1234,5678",',  # test_wsgiref
        '("ftp://%25parrot@localhost/foo/bar/baz.html",',  # test_urllib2: a user name
    ],
)
def test_names_lookup_keys_short_numbers_and_user_names_are_kept(r, line):
    assert r.redact_text(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("https://api.example.com/v1/items?key=G1&q=x", "G1"),
        ("https://api.example.com/v1/items?key=kQzXvBnTrWpLmYsD", "kQzXvBnTrWpLmYsD"),
        ("https://api.example.com/v1/verify?otp=1234", "1234"),  # an OTP's numbers are secret
        ("https://api.example.com/v1/items?token=12345678", "12345678"),
        ("git clone https://x7Kq9mZ2pL4vN8rT3wY6@example.com/a.git", "x7Kq9mZ2pL4vN8rT3wY6"),
        ("api_key=plain-md5-7", "plain-md5-7"),
    ],
)
def test_secrets_next_to_those_still_go(r, line, secret):
    assert secret not in r.redact_text(line)


# --- a value masked already is a placeholder -----------------------------------------------------

MASKED = [
    # slack_bolt/adapter/asgi/aiohttp/__init__.py (a test dependency's docstring)
    "export SLACK_BOT_TOKEN=xoxb-***",
    "OPENAI_API_KEY=sk-\u2022\u2022\u2022\u2022",
    'api_key = "sk-proj-****"',
]


@pytest.mark.parametrize("line", MASKED)
def test_a_value_masked_already_is_kept(r, line):
    assert r.redact_text(line) == line


def test_a_real_token_beside_a_mask_is_still_removed(r):
    out = r.redact_text("export SLACK_BOT_TOKEN=xoxb-1234567890-abcdefghijKLMNOP")
    assert "abcdefghijKLMNOP" not in out


# --- code of the providers' SDKs (LiteLLM, huggingface_hub): types, kinds, challenges ------------

KEPT_PROVIDER_CODE = [
    'user_api_key_dict: "UserAPIKeyAuth | None" = None,',
    'credential: "TokenCredential | SupportsTokenInfo", scope: str',
    'vertex_credentials: "VERTEX_CREDENTIALS_TYPES | None",',
    'credentials: "str | Mapping[str, object] | None", new_master_key: str',
    'where={"auth_type": "oauth2", "oauth2_flow": None},',
    'credential_type="oauth2",',
    '"hf spaces secrets add username/my-space --secrets-file .env.secrets",',
    'raise CLIError("--container-registry-password requires --container-registry-username.")',
    'headers={"WWW-Authenticate": f\'Bearer resource_metadata="{resource_metadata}"\'},',
    "AND ($3::text IS NULL OR api_key = $3::text)",
    '"api_key": "6xxxxxxx",',
    "api_key: os.environ/OPENAI_API_KEY",
    "password_length = 16",
]


@pytest.mark.parametrize("line", KEPT_PROVIDER_CODE)
def test_types_kinds_and_challenges_are_kept(r, line):
    assert r.redact_text(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ('headers = {"Authorization": "Bearer dGhpc2lzYXRva2Vu="}', "dGhpc2lzYXRva2Vu"),
        ('token: "Zq8fK2mX | Pw7tR4nB"', "Zq8fK2mX"),
        ('auth = "oauth2:Xy9kQ2mZr7Lp"', "Xy9kQ2mZr7Lp"),
        ('{"password": "Zq8fK2mX | None"}', "Zq8fK2mX"),
        ('{"auth_token": "k3Jd9sLq0PzX"}', "k3Jd9sLq0PzX"),
    ],
)
def test_secrets_beside_those_rules_still_go(r, line, secret):
    assert secret not in r.redact_text(line)
