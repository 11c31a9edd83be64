"""Secret-looking names: environment variables whose values are secrets, and keys (dict, JSON,
header, query parameter, flag) whose values are."""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME_WORDS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "COOKIE",
    "SESSION",
    "JWT",
    "DSN",
    "SIGNATURE",
)
MIN_SECRET_VALUE = 6
# Variables whose names match but whose values are not secrets (paths, sockets, our own ids).
NOT_SECRET_NAMES = frozenset(
    {
        "PWD",
        "OLDPWD",
        "SSH_AUTH_SOCK",
        "SSH_ASKPASS",
        "GIT_ASKPASS",
        "SUDO_ASKPASS",
        "SESSION_MANAGER",
        "DESKTOP_SESSION",
        "DBUS_SESSION_BUS_ADDRESS",
        "XAUTHORITY",
        "PASSWORD_STORE_DIR",
        "KEYTIMEOUT",
        "GPG_AGENT_INFO",
    }
)
_NOT_SECRET_PREFIXES = ("XDG_SESSION_", "AGENT_TRACE_", "OTEL_", "KEYBOARD", "PYTHON")

_SECRET_NAME_RE = re.compile("|".join(SECRET_NAME_WORDS))

# Secret-looking keys, judged on words: "apiKey", "X-Api-Key", "http.request.header.authorization"
# → api_key, x_api_key, http_request_header_authorization. Plurals ("max_tokens") are not secrets.
_KEY_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "token",
        "auth",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "jwt",
        "dsn",
        "signature",
        "apikey",
        "sessionid",
        "jsessionid",
        "phpsessid",
        "otp",
        "bearer",
        "privatekey",
        "accesskey",
        "secretkey",
        "sig",
    }
)
_KEY_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("account", "key"),
        ("session", "key"),
        ("session", "token"),
        ("client", "secret"),
        ("set", "cookie"),
    }
)
# A last word that names what kind of thing the secret is, where it lives or how it is used, not
# the secret itself: auth_type="oauth2", secrets_file=".env.secrets", token_url, password_length.
_DESCRIPTOR_WORDS = frozenset(
    "type types kind url urls uri endpoint file path dir name names flow method methods scheme"  # noqa: SIM905
    " format rates count length limit expiry expires ttl".split()
)
_NUMERIC_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "otp", "pin", "secret"})
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_KEY_SPLIT_RE = re.compile(r"[^a-z0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name looks secret."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES or upper.startswith(_NOT_SECRET_PREFIXES):
        return False
    return bool(_SECRET_NAME_RE.search(upper))


_SCALARS = frozenset({int, float, bool})


def remember(memo: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """Put ``key`` in a bounded memo (emptied when full: repeats come back at once)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value


_key_cache: dict[str, tuple[bool, bool]] = {}


def key_verdict(key: str) -> tuple[bool, bool]:
    """(secret, numbers too) for a dict/JSON/header key."""
    found = _key_cache.get(key)
    if found is not None:
        return found
    words = [w for w in _KEY_SPLIT_RE.split(_CAMEL_RE.sub("_", key).lower()) if w]
    pairs = zip(words, words[1:], strict=False)
    secret = any(w in _KEY_WORDS for w in words) or any(p in _KEY_PAIRS for p in pairs)
    if secret and len(words) > 1 and words[-1] in _DESCRIPTOR_WORDS:
        secret = False
    verdict = (secret, secret and any(w in _NUMERIC_SECRET_WORDS for w in words))
    remember(_key_cache, key, verdict, 4096)
    return verdict


def is_secret_key(key: str) -> bool:
    """Whether values under this key (dict, JSON, header, query parameter) are secrets."""
    return key_verdict(key)[0]
