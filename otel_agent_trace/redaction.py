"""Redaction: the one place that decides what a secret looks like and how it is replaced.

Applied wherever shareable output is written: the trace-tier session file, its ZIP, and the OTLP
stream. Markers say what was removed (``<redacted:env:OPENAI_API_KEY>``) so a replay can tell a
redaction from a real difference.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAME_WORDS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "COOKIE",
    "SESSION",
    "JWT",
    "DSN",
    "SIGNATURE",
)
_MIN_SECRET_VALUE = 6
# Variables whose names match but whose values are never secrets.
_NOT_SECRET_NAMES = frozenset(
    {"AGENT_TRACE_SESSION_ID", "SESSION_MANAGER", "XDG_SESSION_ID", "XDG_SESSION_TYPE"}
)

_SECRET_NAME_RE = re.compile("|".join(SECRET_NAME_WORDS), re.IGNORECASE)
_SECRET_KEY_RE = re.compile(
    r"(api[_-]?key|apikey|password|passwd|secret|token|authorization|auth|cookie|credential|private[_-]?key"
    r"|access[_-]?key|session[_-]?id|x-api-key|client[_-]?secret|signature|dsn)",
    re.IGNORECASE,
)

# Known token shapes (ordered: the most specific first).
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)"),
    ),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    (
        "github_token",
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    ),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"\bxox[abpors]-[A-Za-z0-9\-]{10,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}")),
    ("bearer", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9+/=._\-~]{8,}")),
)
_URL_USERINFO_RE = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s:@]+(?::[^/\s@]*)?)@"
)
_QUERY_SECRET_RE = re.compile(
    r"(?P<key>[?&;](?:[A-Za-z0-9_\-]*(?:key|token|secret|password|passwd|sig|signature|auth|credential)"
    r"[A-Za-z0-9_\-]*))=(?P<value>[^&#\s\"']+)",
    re.IGNORECASE,
)


def marker(kind: str) -> str:
    return f"<redacted:{kind}>"


def _is_secret_env(name: str, value: str) -> bool:
    return (
        len(value) >= _MIN_SECRET_VALUE
        and name not in _NOT_SECRET_NAMES
        and bool(_SECRET_NAME_RE.search(name))
    )


class Redactor:
    """Removes secrets from strings and nested JSON-like values; never raises, idempotent."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        patterns: Iterable[str] = (),
        allow: Iterable[str] = (),
        home: str | None = None,
    ):
        env = os.environ if env is None else env
        self._allow = frozenset(a for a in allow if a)
        values = sorted(
            ((v, k) for k, v in env.items() if _is_secret_env(k, v) and v not in self._allow),
            key=lambda item: -len(item[0]),
        )
        self._env_values = {v: k for v, k in values}
        self._env_re = re.compile("|".join(re.escape(v) for v, _ in values)) if values else None
        self._user_patterns = tuple(re.compile(p) for p in patterns)
        home = os.path.expanduser("~") if home is None else home
        self._home = home.rstrip("/") if home and home not in ("/", "") else None
        self._home_re = (
            re.compile(r"(?<![\w./~-])" + re.escape(self._home) + r"(?=/|$|[\s\"'])") if self._home else None
        )

    def add_pattern(self, pattern: str) -> None:
        self._user_patterns = self._user_patterns + (re.compile(pattern),)

    def redact_text(self, text: str) -> str:
        if not text:
            return text
        try:
            return self._redact_text(text)
        except Exception:  # redaction must never break the writer
            return marker("error")

    def _redact_text(self, text: str) -> str:
        if self._env_re is not None:
            text = self._env_re.sub(lambda m: marker("env:" + self._env_values[m.group(0)]), text)
        for kind, pattern in _TOKEN_PATTERNS:
            text = pattern.sub(lambda m, kind=kind: self._keep_allowed(m.group(0), kind), text)
        if "://" in text:
            text = _URL_USERINFO_RE.sub(
                lambda m: (
                    m.group("scheme") + marker("userinfo") + "@"
                    if m.group("userinfo") != marker("userinfo")[:-1]
                    else m.group(0)
                ),
                text,
            )
        if "=" in text:
            text = _QUERY_SECRET_RE.sub(
                lambda m: (
                    m.group(0)
                    if m.group("value").startswith("<redacted")
                    else f"{m.group('key')}={marker('query')}"
                ),
                text,
            )
        for pattern in self._user_patterns:
            text = pattern.sub(lambda m: self._keep_allowed(m.group(0), "pattern"), text)
        if self._home_re is not None and self._home in text:
            text = self._home_re.sub("~", text)
        return text

    def _keep_allowed(self, found: str, kind: str) -> str:
        return found if found in self._allow or found.startswith("<redacted") else marker(kind)

    def redact(self, value: Any, _depth: int = 0) -> Any:
        """Redact a nested value: strings, dict values under secret-looking keys, lists."""
        if isinstance(value, str):
            return self.redact_text(value)
        if _depth > 32:
            return value
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if isinstance(key, str) and _SECRET_KEY_RE.search(key) and _is_scalar_secret(item):
                    out[key] = item if item in self._allow else marker(f"key:{key}")
                else:
                    out[key] = self.redact(item, _depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            return [self.redact(item, _depth + 1) for item in value]
        return value


def _is_scalar_secret(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value) and not value.startswith("<redacted")
    return isinstance(value, (int, float, bytes)) and not isinstance(value, bool)


_default: Redactor | None = None


def get_redactor() -> Redactor:
    """The process-wide redactor built from the environment and settings."""
    global _default
    if _default is None:
        from otel_agent_trace.settings import get_settings

        settings = get_settings()
        _default = Redactor(patterns=settings.redact_patterns, allow=settings.redact_allow)
    return _default


def reset_redactor(redactor: Redactor | None = None) -> None:
    """Use ``redactor`` from now on (``None``: rebuild from the environment on next use)."""
    global _default
    _default = redactor


def redact(value: Any) -> Any:
    return get_redactor().redact(value)
