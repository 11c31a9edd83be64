"""What the redactor removes, what it keeps, and the markers it leaves."""

from __future__ import annotations

import json

import pytest

from otel_agent_trace.redaction import Redactor, is_secret_key, is_secret_name, marker

HOME = "/home/alice"
ENV = {
    "OPENAI_API_KEY": "sk-proj-Abc123Def456Ghi789Jkl012",
    "DB_PASSWORD": "hunter2hunter2",
    "MY_SERVICE_TOKEN": "tok_9f8e7d6c5b4a",
    "SHORT_TOKEN": "abc12",  # under 6 characters: not a secret value
    "EDITOR": "vim-sensible-defaults",  # name does not look secret
    "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1",  # named like one, but a socket path
    "AGENT_TRACE_SESSION_ID": "session-20260101-000000-abcdef12",
}


@pytest.fixture
def r() -> Redactor:
    return Redactor(env=ENV, home=HOME)


def test_env_secret_values_anywhere_with_their_name(r):
    text = "curl -u x:hunter2hunter2 https://h/?k=1 # key sk-proj-Abc123Def456Ghi789Jkl012!"
    out = r.redact_text(text)
    assert "hunter2hunter2" not in out and "sk-proj-Abc123" not in out
    assert "<redacted:env:DB_PASSWORD>" in out and "<redacted:env:OPENAI_API_KEY>" in out
    assert r.redact_text("prefixtok_9f8e7d6c5b4asuffix") == "prefix<redacted:env:MY_SERVICE_TOKEN>suffix"


@pytest.mark.parametrize("value", ["~/keys/sa.json", HOME + "/keys/sa.json"])
@pytest.mark.parametrize("prefilter", [True, False])
def test_an_env_secret_under_home_in_either_spelling(value, prefilter):
    # Once the home prefix became "~" the value would match only on a second pass (not idempotent).
    r = Redactor(env={"GOOGLE_APPLICATION_CREDENTIALS": value}, home=HOME, prefilter=prefilter)
    for text in (f"creds at {HOME}/keys/sa.json", "creds at ~/keys/sa.json"):
        out = r.redact_text(text)
        assert out == "creds at <redacted:env:GOOGLE_APPLICATION_CREDENTIALS>"
        assert r.redact_text(out) == out


def test_env_values_that_are_not_secrets_are_kept(r):
    text = "abc12 vim-sensible-defaults /tmp/ssh-XXXX/agent.1 session-20260101-000000-abcdef12"
    assert r.redact_text(text) == text


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        ("sk-ant-api03-" + "a1B2c3D4" * 5, "anthropic_key"),
        ("sk-" + "A1b2C3d4E5" * 4, "openai_key"),
        ("sk-proj-" + "x9Y8z7" * 8, "openai_key"),
        ("ghp_" + "A1b2C3d4E5f6" * 3, "github_token"),
        ("gho_" + "A1b2C3d4E5f6" * 3, "github_token"),
        ("github_pat_11ABCDEFG0" + "x" * 40, "github_token"),
        ("AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        ("xoxb-1234567890-" + "a" * 20, "slack_token"),
        ("xoxp-1234567890-" + "b" * 20, "slack_token"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
        ),
        ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google_api_key"),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ],
)
def test_token_shapes_outside_the_environment(r, secret, kind):
    out = r.redact_text(f"the value ({secret}) was used")
    assert secret not in out
    assert out == f"the value ({marker(kind)}) was used"


def test_pem_private_key_blocks_whole_and_cut(r):
    body = "b3BlbnNzaC1rZXktdjEAAAAA\nQUJDRA=="
    block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    assert r.redact_text(f"key:\n{block}\nbye") == "key:\n<redacted:private_key>\nbye"
    cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA"  # a preview that lost the END line
    assert r.redact_text(cut) == "<redacted:private_key>"
    public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
    assert r.redact_text(public) == public


def test_bearer_tokens_with_all_base64_characters(r):
    token = "abc+/=DEF-_.~123xyz"
    assert r.redact_text(f"sent Bearer {token} ok") == "sent Bearer <redacted:bearer> ok"
    assert r.redact_text(f"bearer {token}") == "bearer <redacted:bearer>"


def test_url_userinfo_and_secret_query_values(r):
    out = r.redact_text(
        "git clone https://oauth2:glpat-AbCdEf@gitlab.com/x.git and redis://:pw1234@cache:6379/0"
    )
    assert (
        out
        == "git clone https://<redacted:userinfo>@gitlab.com/x.git and redis://<redacted:userinfo>@cache:6379/0"
    )
    url = "https://api.example.com/v1/items?limit=10&api_key=K123456&sig=S98765&access_token=T1&key=G1"
    out = r.redact_text(url)
    assert out == (
        "https://api.example.com/v1/items?limit=10&api_key=<redacted:key:api_key>&sig=<redacted:key:sig>"
        "&access_token=<redacted:key:access_token>&key=<redacted:key:key>"
    )
    assert r.redact_text("https://auth.example.com:8443/login?next=/home") == (
        "https://auth.example.com:8443/login?next=/home"
    )


def test_dict_values_under_secret_keys(r):
    value = {
        "api_key": "plainvalue1",
        "apiKey": "plainvalue2",
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": ["k1", "k2"], "Accept": "json"},
        "http.request.header.cookie": ["sid=abc"],
        "password": 123456,
        "credentials": {"user": "bob", "secret": "s3"},
        "usage": {"input_tokens": 12, "max_tokens": 100, "token_count": 7},
        "session.id": "session-1",
        "model": "gpt-4o",
    }
    out = r.redact(value)
    assert out == {
        "api_key": "<redacted:key:api_key>",
        "apiKey": "<redacted:key:apiKey>",
        "headers": {
            "Authorization": "<redacted:key:Authorization>",
            "X-Api-Key": ["<redacted:key:X-Api-Key>", "<redacted:key:X-Api-Key>"],
            "Accept": "json",
        },
        "http.request.header.cookie": ["<redacted:key:http.request.header.cookie>"],
        "password": "<redacted:key:password>",
        "credentials": {"user": "<redacted:key:credentials>", "secret": "<redacted:key:credentials>"},
        "usage": {"input_tokens": 12, "max_tokens": 100, "token_count": 7},
        "session.id": "session-1",
        "model": "gpt-4o",
    }
    assert value["api_key"] == "plainvalue1", "the input is never changed in place"


def test_secret_keys_inside_json_strings_and_python_literals(r):
    args = json.dumps({"query": "weather", "api_key": "zz-plain-1", "nested": {"password": "p@ss word"}})
    out = json.loads(r.redact_text(args))
    assert out == {
        "query": "weather",
        "api_key": "<redacted:key:api_key>",
        "nested": {"password": "<redacted:key:password>"},
    }
    wrapped = json.dumps({"body": json.dumps({"client_secret": "cs-plain-2"})})  # JSON in JSON
    assert "cs-plain-2" not in r.redact_text(wrapped)
    assert json.loads(json.loads(r.redact_text(wrapped))["body"]) == {
        "client_secret": "<redacted:key:client_secret>"
    }
    assert (
        r.redact_text("{'token': 'abc9f3e1', 'model': 'gpt'}")
        == "{'token': '<redacted:key:token>', 'model': 'gpt'}"
    )


def test_headers_assignments_and_command_lines(r):
    assert r.redact_text("Authorization: Basic dXNlcjpwYXNz\nAccept: */*") == (
        "Authorization: <redacted:key:Authorization>\nAccept: */*"
    )
    assert r.redact_text("Cookie: sessionid=abc; csrftoken=xyz\n") == "Cookie: <redacted:key:Cookie>\n"
    assert (
        r.redact_text("export STRIPE_SECRET=plain3 && run")
        == "export STRIPE_SECRET=<redacted:key:STRIPE_SECRET> && run"
    )
    assert r.redact_text("mysql --user root --password 's3 cr3t' -h db") == (
        "mysql --user root --password '<redacted:key:password>' -h db"
    )
    assert (
        r.redact_text("tool --api-key=plain4 --verbose") == "tool --api-key=<redacted:key:api-key> --verbose"
    )
    argv = ["psql", "--password", "plain5", "-h", "db", "--token", "--next"]
    assert r.redact(argv) == [
        "psql",
        "--password",
        "<redacted:key:password>",
        "-h",
        "db",
        "--token",
        "--next",
    ]


def test_prose_about_tokens_is_kept(r):
    text = (
        "input_tokens: 45, max_tokens=100; the task-abcdefghijklmnopqrstuvwxyz and the disk-usage-report-2024"
    )
    assert r.redact_text(text) == text


def test_home_is_replaced_as_a_path_prefix_only(r):
    assert r.redact_text("/home/alice/project/a.py") == "~/project/a.py"
    assert r.redact_text("cd /home/alice && ls") == "cd ~ && ls"
    assert r.redact_text("PATH=/home/alice/bin:/usr/bin") == "PATH=~/bin:/usr/bin"
    assert r.redact_text("file:///home/alice/x") == "file://~/x"
    kept = "/home/alicexyz/a /srv/home/alice/a /home/alice-backup x/home/alice"
    assert r.redact_text(kept) == kept
    assert Redactor(env={}, home="/").redact_text("/etc/passwd") == "/etc/passwd"


def test_allow_list_and_user_patterns(r):
    allowed = Redactor(env=ENV, home=HOME, allow=["DB_PASSWORD", "AKIAIOSFODNN7EXAMPLE"])
    assert allowed.redact_text("hunter2hunter2 AKIAIOSFODNN7EXAMPLE") == "hunter2hunter2 AKIAIOSFODNN7EXAMPLE"
    custom = Redactor(env=ENV, home=HOME, patterns=[r"ACME-\d{4,}", r"cust_[a-z]+"])
    assert (
        custom.redact_text("order ACME-12345 for cust_bob")
        == "order <redacted:pattern> for <redacted:pattern>"
    )
    assert custom.add_pattern(r"INV\d+", kind="invoice")
    assert custom.redact_text("INV42") == "<redacted:invoice>"
    assert not custom.add_pattern(r"(unclosed"), "a bad pattern is refused, not raised"
    custom.allow("cust_alice")
    assert custom.redact_text("cust_alice cust_bob") == "cust_alice <redacted:pattern>"


def test_environment_changes_are_picked_up(monkeypatch):
    monkeypatch.delenv("LATE_SECRET_KEY", raising=False)
    r = Redactor(home=HOME)  # follows os.environ
    assert r.redact_text("v=late-value-1234") == "v=late-value-1234"
    monkeypatch.setenv("LATE_SECRET_KEY", "late-value-1234")  # an agent loading .env
    assert r.redact_text("v=late-value-1234") == "v=<redacted:env:LATE_SECRET_KEY>"
    monkeypatch.setenv("LATE_SECRET_KEY", "rotated-value-5678")  # same size, new value
    assert (
        r.redact_text("rotated-value-5678 late-value-1234")
        == "<redacted:env:LATE_SECRET_KEY> late-value-1234"
    )
    monkeypatch.delenv("LATE_SECRET_KEY")
    assert r.redact_text("rotated-value-5678") == "rotated-value-5678"


def test_objects_are_redacted_in_the_form_they_are_written(r):
    class Config:
        def __repr__(self) -> str:
            return "Config(token='tok_9f8e7d6c5b4a')"

    assert r.redact(Config()) == "Config(token='<redacted:env:MY_SERVICE_TOKEN>')"
    assert r.redact(ValueError("bad hunter2hunter2")) == "ValueError: bad <redacted:env:DB_PASSWORD>"
    assert r.redact(("a", 1, None, 2.5, True)) == ("a", 1, None, 2.5, True)
    assert r.redact(b"raw bytes") == b"raw bytes"  # written as size + hash, never as content


def test_preview_is_redacted_before_it_is_cut(r):
    secret = ENV["OPENAI_API_KEY"]
    for at in range(480, 505):  # the cut falls before, inside and after the secret
        text = "x" * at + secret + "y" * 20_000
        out = r.redact_preview(text, 500)
        assert not any(secret[:k] in out for k in range(8, len(secret) + 1)), at
        assert out.endswith("chars]") and len(out) < 600
    jwt = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOi" + "x" * 900 + ".sig0123456789"
    for at in (300, 450, 495):  # the redacted head may end inside a long token: never half of it
        out = r.redact_preview("y" * at + " " + jwt + " tail" * 100, 500)
        assert "eyJzdWIiOi" not in out and "xxxxxxxxxx" not in out, at
    long_value = '{"token": "' + "v" * 2000 + '"}'
    assert "vvvvvvvvvv" not in r.redact_preview(long_value, 500)
    assert r.redact_preview({"api_key": "abc", "q": "x"}, 500) == {
        "api_key": "<redacted:key:api_key>",
        "q": "x",
    }
    big = {"password": "plain-pw-1", "rows": list(range(500))}
    out = r.redact_preview(big, 100)
    assert isinstance(out, str) and "plain-pw-1" not in out


def test_never_raises(r):
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    loop: dict = {}
    loop["self"] = loop
    assert isinstance(r.redact(Hostile()), str)
    assert "<redacted:too_deep>" in str(r.redact(loop))
    assert (
        r.redact_text("\ud800 lone surrogate hunter2hunter2")
        == "\ud800 lone surrogate <redacted:env:DB_PASSWORD>"
    )


def test_names_and_keys():
    assert (
        is_secret_name("OPENAI_API_KEY") and is_secret_name("GITHUB_TOKEN") and is_secret_name("SENTRY_DSN")
    )
    assert not is_secret_name("SSH_AUTH_SOCK") and not is_secret_name("EDITOR") and not is_secret_name("PWD")
    assert is_secret_key("x-api-key") and is_secret_key("clientSecret") and is_secret_key("Set-Cookie")
    assert not is_secret_key("max_tokens") and not is_secret_key("session.id") and not is_secret_key("author")


def test_process_wide_redactor_follows_settings_and_api(monkeypatch):
    from otel_agent_trace import redaction
    from otel_agent_trace.redaction import shared
    from otel_agent_trace.settings import Settings, set_settings

    monkeypatch.setattr(shared, "_api_patterns", [])
    monkeypatch.setattr(shared, "_api_allow", [])
    set_settings(Settings(redact_patterns=(r"EMP-\d{3,5}",), redact_allow=("AKIAIOSFODNN7EXAMPLE",)))
    redaction.reset_redactor()
    try:
        assert redaction.redact("EMP-123 AKIAIOSFODNN7EXAMPLE") == "<redacted:pattern> AKIAIOSFODNN7EXAMPLE"
        redaction.add_pattern(r"TICKET-\d+", kind="ticket")
        redaction.allow("EMP-999")
        redaction.reset_redactor()  # API additions survive a rebuild
        assert redaction.redact("TICKET-7 EMP-999 EMP-123") == "<redacted:ticket> EMP-999 <redacted:pattern>"
    finally:
        set_settings(None)
        redaction.reset_redactor()
