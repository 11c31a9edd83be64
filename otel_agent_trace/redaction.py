"""Redaction: the one place that decides what a secret looks like and how it is replaced.

Applied wherever shareable output is written: the trace-tier session file (and so its ZIP) and
every span forwarded to an exporter (OTLP, console, …). The checkpoint tier is never redacted.

What is removed, and the marker that replaces it (so a replay can tell a redaction from a real
difference):

* values (6+ chars) of environment variables whose names look secret → ``<redacted:env:NAME>``;
* known token shapes, in the environment or not (``sk-…``, ``sk-ant-…``, ``ghp_…``,
  ``github_pat_…``, ``AKIA…``, ``xox?-…``, JWTs, Google/Stripe/Hugging Face keys, PEM private-key
  blocks, ``Bearer …``) → ``<redacted:openai_key>`` etc.;
* URL user-info (``scheme://user:pass@host``) → ``scheme://<redacted:userinfo>@host``;
* values under secret-looking keys: dict keys, JSON / Python-literal text (``"api_key": "…"``),
  headers and assignments (``Authorization: Basic …``, ``token=…``), URL query parameters and
  command-line flags (``--password …``) → ``<redacted:key:api_key>``; in text, only a value that
  can be a credential (not code such as ``api_key = os.getenv("API_KEY")``, a placeholder or
  words: see ``_holds_secret``);
* the home directory as a path prefix only → ``~`` (never a bare substring);
* user patterns (``AGENT_TRACE_REDACT_PATTERNS`` or :func:`add_pattern`) → ``<redacted:pattern>``.

Exact strings on the allow list (``AGENT_TRACE_REDACT_ALLOW`` or :func:`allow`) are kept; an
allow-list entry that names an environment variable keeps that variable's value.

The redactor never raises (a failure yields ``<redacted:error>``) and is idempotent. Environment
secrets are re-read whenever a secret-looking variable is added, removed or changed (a cheap check
on each call), so keys an agent loads from ``.env`` after start-up are redacted too.

Cost: one RE2 pass first says whether a text holds anything any rule would change (most text
does not; see ``_PREFILTER_STATIC``); a span's new attribute strings take one pass together.
Otherwise each rule runs only on text that holds what it needs (substring checks first; Python's
``re`` is slow on alternations), the key rules only on lines where a secret-looking key meets its
separator, searched from near their key words; keys are judged once, and strings, attribute
pairs and key markers are remembered in bounded memos. A pass is repeated until nothing changes,
since a replacement changes its neighbours' context. Every shortcut is tested to give what the
rules alone give (``tests/privacy/test_redaction_prefilter.py``).
"""

from __future__ import annotations

import bisect
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from operator import is_
from typing import Any

from otel_agent_trace import message_text
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import internal_error, report_once

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
_NUMERIC_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "otp", "pin", "secret"})
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_KEY_SPLIT_RE = re.compile(r"[^a-z0-9]+")
# A key in text is only considered when it contains one of these (the words check decides).
_KEY_HINT = (
    r"(?=[\w.\- ]{0,64}?(?i:secret|pass(?!es)|pwd|token(?!s)|auth(?!or(?!i))|cookie|credential|key"
    r"|jwt|dsn|sig|sess|bearer|otp))"
)

_MARKER_RE = r"<redacted:[^<>\s]{1,120}>"
_MARKER_KIND_RE = re.compile(r"[^A-Za-z0-9_.:\-]")
_MARKER_SUB = re.compile(_MARKER_RE)


def marker(kind: str) -> str:
    """``<redacted:KIND>`` (the kind made safe to read back)."""
    return f"<redacted:{_MARKER_KIND_RE.sub('_', kind)[:100] or 'secret'}>"


def is_marker(text: Any) -> bool:
    return isinstance(text, str) and text.startswith("<redacted:") and text.endswith(">")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name looks secret."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES or upper.startswith(_NOT_SECRET_PREFIXES):
        return False
    return bool(_SECRET_NAME_RE.search(upper))


_SCALARS = frozenset({int, float, bool})


def _remember(memo: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """Put ``key`` in a bounded memo (emptied when full: repeats come back at once)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value


_key_cache: dict[str, tuple[bool, bool]] = {}


def _key_verdict(key: str) -> tuple[bool, bool]:
    """(secret, numbers too) for a dict/JSON/header key."""
    found = _key_cache.get(key)
    if found is not None:
        return found
    words = [w for w in _KEY_SPLIT_RE.split(_CAMEL_RE.sub("_", key).lower()) if w]
    pairs = zip(words, words[1:], strict=False)
    secret = any(w in _KEY_WORDS for w in words) or any(p in _KEY_PAIRS for p in pairs)
    verdict = (secret, secret and any(w in _NUMERIC_SECRET_WORDS for w in words))
    _remember(_key_cache, key, verdict, 4096)
    return verdict


def is_secret_key(key: str) -> bool:
    """Whether values under this key (dict, JSON, header, query parameter) are secrets."""
    return _key_verdict(key)[0]


# Known token shapes: (marker kind, regex). Word-ish boundaries keep "task-…" and "disk-…" out.
TOKEN_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        # key material on the next line (also escaped: \n), or nothing yet (a cut preview); not
        # the marker alone, as code that reads a key holds it (b"-----BEGIN … PRIVATE KEY-----")
        r"(?=[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*[A-Za-z0-9+/=]|\s*\Z)"
        r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
    ),
    ("anthropic_key", r"(?<![\w-])sk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai_key", r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    ("stripe_key", r"(?<![\w-])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github_token", r"(?<![\w-])(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("aws_access_key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("slack_token", r"(?<![\w-])xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google_api_key", r"(?<![\w-])AIza[0-9A-Za-z_\-]{30,}"),
    ("huggingface_token", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
    # A JWT; at the very end of the text also a cut one (a preview's head may end inside it).
    (
        "jwt",
        r"(?<![\w-])eyJ[A-Za-z0-9_\-]{5,}(?:\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}|(?:\.[A-Za-z0-9_\-]*)?\Z)",
    ),
)
# Each token pass runs only on text that holds one of its needles (``in`` is far cheaper than a scan).
_TOKEN_NEEDLES = {
    "private_key": ("-----BEGIN",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "stripe_key": ("_live_", "_test_"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "aws_access_key": ("AKIA", "ASIA"),
    "slack_token": ("xox",),
    "google_api_key": ("AIza",),
    "huggingface_token": ("hf_",),
    "jwt": ("eyJ",),
}
_TOKEN_PASSES = tuple((kind, _TOKEN_NEEDLES[kind], re.compile(src)) for kind, src in TOKEN_PATTERNS)
_TOKEN_NEEDLE_PASS = tuple((n, i) for i, (_, needles, _) in enumerate(_TOKEN_PASSES) for n in needles)
# Words one of which every key-based rule (JSON, headers, flags, cookies) needs, lower-cased.
_KEY_NEEDLES = ("secret", "pass", "pwd", "token", "auth", "cookie", "credential", "key", "jwt", "dsn", "sig")
_KEY_NEEDLES += ("sess", "bearer", "otp")

# Bearer tokens: all base64 / base64url characters.
_BEARER = r"(?P<bearer>(?P<bearer_p>(?<![A-Za-z])(?i:bearer)[ \t]+)[A-Za-z0-9+/=._\-~]{8,})"
# scheme://user:pass@host
_USERINFO = r"(?P<userinfo>(?<=://)[\w\-.~%!$&()*+,;=:]+@)"  # the characters RFC 3986 allows
# A key that opens a string ("Set-Cookie: …" or 'token=…'): which quote opened it. A value never
# starts with that quote unless the key closed the string itself ("password": "…", 'token'='…'):
# there it is the string's end (header="Set-Cookie:", sep="\r\n": the value is not ", sep=").
_OPENED = r"(?:(?<=\")(?P<{0}_dq>)|(?<=')(?P<{0}_sq>)|(?<![\"']))"  # one way only: no backtracking
_NOT_CLOSING = r"{1}(?({0}_dq)(?!\")|(?({0}_sq)(?!')|))"
# A cookie header's value: its pairs up to the end of the line or of the string that holds it; a
# pair's value may be quoted (name="v; w", RFC 6265), also with escaped quotes inside.
_COOKIE_VALUE = r"[^\s<>\"'](?:=\"(?:[^\"\\\r\n]|\\[^\r\n])*\"|[^\r\n<>\"'])*"
# Key-based rules, all within one line; each alternative is one named group (see ``lastgroup``).
_STRUCTURAL = (
    # "key": "value" (JSON, also once-escaped \"key\": \"value\") and 'key': 'value' (Python).
    r"(?P<kv>(?P<kv_q>\\{0,3}[\"'])" + _KEY_HINT + r"(?P<kv_k>[\w.\- ]{1,64}?)(?P=kv_q)"
    r"[ \t]*:[ \t]*(?P=kv_q)(?P<kv_v>[^\n]*?)(?:(?<!\\)(?P=kv_q)|\Z))",
    # --password hunter2, --api-key=abc, -token 'x'
    r"(?P<cli>(?<![^\s\"'=])"
    + _OPENED.format("cli")
    + r"(?P<cli_k>--?"
    + _KEY_HINT
    + r"[A-Za-z][\w\-]{0,63})(?P<cli_s>=|[ \t]+)"
    + _NOT_CLOSING.format("cli", "")
    + r"(?P<cli_v>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'<>\-][^\s\"'<>]*))",
    # Authorization: Basic …, token=…, ?api_key=…, PASSWORD="…" (not a host:port after :// or @)
    r"(?P<kva>(?<![\w\-])(?<!//)(?<!@)(?=[A-Za-z_][\w.\-]{0,63}[\"']?[ \t]*[:=])"
    + _OPENED.format("kva")
    + _KEY_HINT.replace(" ]", "]")
    + r"(?P<kva_k>[A-Za-z_][\w.\-]{0,63})(?P<kva_q>[\"'])?"
    r"(?P<kva_s>[ \t]*[:=][ \t]*)"
    + _NOT_CLOSING.format("kva", "(?(kva_q)|")
    + ")"
    + r"(?P<kva_v>(?<=ookie:)[ \t]*"
    + _COOKIE_VALUE
    + r"|(?<=ookie: )"
    + _COOKIE_VALUE
    + r"|(?:(?i:bearer|basic|token|digest)[ \t]+)?"
    r"(?:\\{1,3}\"[^\"\\\n<>]+\\{1,3}\"|\\{1,3}'[^'\\\n<>]+\\{1,3}'"
    r"|\"(?:[^\"\\\n<>]|\\[^\n])+\"|'(?:[^'\\\n<>]|\\[^\n])+'|[^\s\"'<>&,;)\]}]+)))",
)
_HOME_TAIL = r"(?=$|[/\s\"'`:;,)\]}>])"
_BEARER_RE = re.compile(_BEARER)
_USERINFO_RE = re.compile(_USERINFO)
_KEYED_RE = re.compile("|".join([r"(?P<marker>" + _MARKER_RE + ")", *_STRUCTURAL]))


# --- the "nothing to redact here" check ---------------------------------------------------------
#
# Most text an agent handles holds no secret, yet every rule above needs its own scan to say so
# (≈ 45 µs for 700 characters of code). One pattern says it at once: a superset of what any rule
# changes — the token shapes' needles, user-info, Bearer, a secret-looking key word followed by
# its separator, a secret-looking flag, the environment's secret values. Where it finds nothing,
# no rule would change anything but the home prefix (which carries no secret); where it finds
# something, every rule runs as before. It runs in RE2 (linear time, every alternative in one
# pass); without the google-re2 package (the optional "re2" extra) every text takes the rules.
try:
    import re2 as _re2
except ImportError:  # pragma: no cover - installed without the "re2" extra
    _re2 = None

# Any character a key can hold (Python's \w, ".", "-", " ") and more: a superset, kept to ASCII
# exclusions so the automaton stays small. The rest of a key is written unbounded (the rules stop
# at 64 characters): also a superset, and counted repetitions multiply RE2's states (building them
# on new input cost ≈ 10 µs a text).
_KEYISH_EXCLUDED = "\\t\\n\\r\\f\\v\"'\\\\:="
_KEY_REST = "[^" + _KEYISH_EXCLUDED + "]*"


def _key_char_but(chars: str) -> str:
    """One key character other than ``chars`` (a look-ahead ``(?!x)`` that RE2 has not)."""
    return "[^" + chars + _KEYISH_EXCLUDED + "]"


# A key word of _KEY_HINT (its look-aheads spelled out for RE2, which has none) and the rest of
# the key up to its separator: what the key rules (kv, kva) need before they change anything.
# Bare "key" only where a key made of it can be secret: after a pair's first word, or after a
# query separator. Every alternative is a superset of what _keyed() redacts.
_SEPARATOR = r"[\"'\\]{0,4}[ \t]*[:=]"
_NOT_S, _NOT_E, _NOT_O, _NOT_R = (_key_char_but(c) for c in ("sS", "eE", "oO", "rR"))
_PREFILTER_KEYED = (
    r"(?i:(?:(?:secret|pwd|cookie|credential|jwt|dsn|sig|sess|bearer|otp"
    r"|(?:api|private|access|secret|signing|encryption|master|account|session)[_.\- ]*key"
    r"|[?&;][-\"'\\]*key)" + _KEY_REST
    + f"|token(?:{_NOT_S}{_KEY_REST})?"  # token(?!s)
    + f"|pass(?:{_NOT_E}{_KEY_REST}|[eE](?:{_NOT_S}{_KEY_REST})?)?"  # pass(?!es)
    + f"|auth(?:{_NOT_O}{_KEY_REST}|[oO](?:{_NOT_R}{_KEY_REST}|[rR][iI]{_KEY_REST})?)?"  # auth(?!or(?!i))
    + ")" + _SEPARATOR + ")"
)  # fmt: skip
# The flag rule (--password x, --api-key=x): a key word in a dash-led word.
_PREFILTER_FLAG = (
    r"-[^\s\"'\\:=]*(?i:secret|pass(?:$|[^e]|e$|e[^s])|pwd|token(?:$|[^s])"
    r"|auth(?:$|[^o]|o$|o[^r]|ori)|cookie|credential|jwt|dsn|sig|sess|bearer|otp|key)"
)
_PREFILTER_STATIC = "|".join(
    [
        _PREFILTER_KEYED,
        _PREFILTER_FLAG,
        # token shapes: each pattern's match holds one of its needles
        *(re.escape(needle) for needle, _ in _TOKEN_NEEDLE_PASS),
        r"://[^\s/?#@<>\"'\\]+@",
        r"(?i:bearer)[ \t]",
        r"<redacted:",
    ]
)


def _compile_prefilter(env_values: tuple[str, ...]) -> Any:
    """``clean(text) -> bool`` for a redactor with these environment secrets: whether no rule
    would change ``text`` (``None``: every text takes the rules)."""
    if _re2 is None:
        return None
    source = _PREFILTER_STATIC
    if env_values:
        source += "|" + "|".join(_re2.escape(v) for v in env_values)
    try:
        options = _re2.Options()
        options.max_mem = 64 << 20
        options.log_errors = False
        compiled = _re2.compile(source, options)
    except Exception as exc:  # too big, or a pattern RE2 refuses: the rules alone are correct
        report_once("redact.prefilter", "otel-agent-trace: redaction prefilter unavailable: %r", exc)
        return None
    try:  # the binding's own search() costs ≈ 2 µs a call in Python; its RE2 object ≈ 0.5 µs
        match = compiled._regexp.Match
        unanchored = _re2._re2.RE2.Anchor.UNANCHORED

        def clean(text: str) -> bool:
            data = text.encode("utf-8")  # a lone surrogate raises: the caller takes the rules
            return match(unanchored, data, 0, len(data))[0][0] == -1

        if not clean("") or clean("api_key=x"):  # pragma: no cover - a binding that changed
            raise ValueError("unexpected RE2 binding")
    except Exception:  # pragma: no cover - another binding version: its public API
        search = compiled.search

        def clean(text: str) -> bool:
            return search(text) is None

    return clean


class Redactor:
    """Removes secrets from strings and nested JSON-like values; never raises, idempotent.

    ``env=None`` follows ``os.environ`` as it changes; a mapping fixes the environment.
    """

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        patterns: Iterable[str] = (),
        allow: Iterable[str] = (),
        home: str | None = None,
        prefilter: bool = True,
    ):
        self._use_prefilter = prefilter  # False: every text takes every rule (tests compare)
        self._prefilter: Any = None
        self._live_env = env is None
        self._env_source: Mapping[str, str] = os.environ if env is None else env
        self._allow: frozenset[str] = frozenset(a for a in allow if a)
        self._user: list[tuple[str, re.Pattern[str]]] = []
        for pattern in patterns:
            self.add_pattern(pattern)
        home = os.path.expanduser("~") if home is None else home
        home = (home or "").rstrip("/")
        self._home = home if len(home) > 1 else ""
        self._lock = threading.RLock()
        self._cache: dict[str, str] = {}
        self._env_len = -1
        self._env_data: dict[Any, Any] | None = None
        self._env_keys: tuple[Any, ...] = ()
        self._env_raw: tuple[Any, ...] = ()
        self._env_items: tuple[tuple[str, str], ...] = ()
        self._env_names: dict[str, str] = {}
        self._compile()

    # --- configuration -------------------------------------------------------------------------

    def add_pattern(self, pattern: str | re.Pattern[str], kind: str = "pattern") -> bool:
        """Also redact matches of ``pattern`` (→ ``<redacted:KIND>``). Returns False (and warns
        once) when the pattern does not compile."""
        try:
            source = pattern.pattern if isinstance(pattern, re.Pattern) else str(pattern)
            flags = pattern.flags if isinstance(pattern, re.Pattern) else 0
            compiled = re.compile(r"(?P<oat_marker>" + _MARKER_RE + r")|(?:" + source + ")", flags)
        except (re.error, TypeError, ValueError) as exc:
            report_once(
                f"redact.pattern:{pattern!r}", "otel-agent-trace: bad redaction pattern %r: %s", pattern, exc
            )
            return False
        self._user = [*self._user, (marker(kind), compiled)]
        self._clear()
        return True

    def allow(self, *values: str) -> None:
        """Never redact these exact strings (or the values of the environment variables so named)."""
        self._allow = self._allow | {v for v in values if isinstance(v, str) and v}
        self._env_len = -1  # re-read the environment with the new allow list
        self._compile()

    @property
    def allowed(self) -> frozenset[str]:
        return self._allow

    def _clear(self) -> None:
        self._cache = {}
        self._pairs: dict[Any, tuple[Any, Any]] = {}
        self._key_markers: dict[str, str] = {}
        self._key_states: dict[Any, int] = {}  # key -> _key_state(key)
        self._seen: dict[str, dict[str, str]] = {}  # plain key -> its texts -> shown (_see)
        self._seen_count = 0
        self._misses: dict[str, int] = {}  # key -> how many of its strings were new (to 256)

    def _secret_env(self) -> tuple[tuple[str, str], ...]:
        items = []
        try:
            for name, value in list(self._env_source.items()):
                if (
                    isinstance(value, str)
                    and len(value) >= MIN_SECRET_VALUE
                    and name not in self._allow
                    and value not in self._allow
                    and value.rstrip("/") != self._home
                    and is_secret_name(name)
                ):
                    items.append((name, value))
        except Exception:  # an odd mapping: keep what we had
            return self._env_items
        return tuple(sorted(items))

    def _compile(self) -> None:
        with self._lock:
            self._env_items = self._secret_env()
            self._snapshot_raw()
            names: dict[str, str] = {}
            home = self._home
            for name, value in self._env_items:
                names.setdefault(value, name)
                # A path under the home directory, in either spelling (the home prefix becomes ~).
                if home and value.startswith("~/"):
                    names.setdefault(home + value[1:], name)
                elif home and value.startswith(home + "/"):
                    names.setdefault("~" + value[len(home) :], name)
            self._env_names = names
            values = sorted(names, key=len, reverse=True)
            self._max_secret = max((len(v) for v in values), default=0)
            self._env_values = tuple(values)
            marker_part = r"(?P<marker>" + _MARKER_RE + ")"
            env_part = "(?P<env>" + "|".join(re.escape(v) for v in values) + ")" if values else ""
            self._env_re = re.compile(marker_part + "|" + env_part) if values else None
            tokens = [f"(?P<t{i}>{source})" for i, (_, source) in enumerate(TOKEN_PATTERNS)]
            # Secrets that must not survive inside a marker-looking text or a key name we echo.
            self._hidden_re = re.compile("|".join([env_part, *tokens] if values else tokens))
            # The home directory as a path prefix only (not /srv/home/me, not x/home/me): after the
            # start, a character that cannot end a path word, or "file://" — looked back at from
            # the end of the match, so that the pattern starts with the literal (fast to find).
            home = re.escape(self._home)
            self._home_re = (
                re.compile(home + r"(?:(?<=file://" + home + r")|(?<![\w.~/\-]" + home + "))" + _HOME_TAIL)
                if self._home
                else None
            )
            self._prefilter = _compile_prefilter(self._env_values) if self._use_prefilter else None
            self._clear()

    def _refresh(self) -> None:
        """Re-read environment secrets if a secret-looking variable changed (cheap when not: on
        every span, so the common case is a length check and C-level identity checks)."""
        if not self._live_env:
            return
        try:
            data = self._env_data
            if data is not None:  # os.environ: compare the stored bytes objects by identity
                if len(data) == self._env_len and (
                    not self._env_keys or all(map(is_, map(data.get, self._env_keys), self._env_raw))
                ):
                    return
            else:
                env = self._env_source
                if len(env) == self._env_len and all(env.get(n) == v for n, v in self._env_items):
                    return
        except Exception:
            return
        if self._secret_env() != self._env_items:
            self._compile()
        else:
            self._snapshot_raw()

    def _snapshot_raw(self) -> None:
        self._env_len = len(self._env_source)
        self._env_data = None
        data = getattr(self._env_source, "_data", None)
        encode = getattr(self._env_source, "encodekey", None)
        keys: list[Any] = []
        values: list[Any] = []
        if type(data) is dict and encode is not None:
            try:
                for name, _ in self._env_items:
                    key = encode(name)
                    keys.append(key)
                    values.append(data.get(key))
                self._env_len = len(data)
                self._env_data = data
            except Exception:
                keys, values = [], []
        self._env_keys = tuple(keys)
        self._env_raw = tuple(values)

    # --- redaction -----------------------------------------------------------------------------

    def redact_text(self, text: str) -> str:
        """``text`` with every secret replaced by a marker."""
        if not isinstance(text, str):
            return self.redact(text)
        self._refresh()
        return self._text(text)

    def redact(self, value: Any) -> Any:
        """Redact a nested value: strings, dicts (values under secret-looking keys entirely),
        lists and tuples; numbers, booleans and ``None`` pass; other objects become their JSON
        form (as the session writer would write them), redacted."""
        try:
            self._refresh()
            return self._value(value, 0)
        except Exception as exc:  # redaction must never break the writer or the exporter
            internal_error("redaction", exc)
            return marker("error")

    def redact_attributes(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        """Span attributes, redacted; each (key, value) pair is remembered, since spans repeat them
        (a span's start and end, every call of the same tool)."""
        try:
            self._refresh()
            return self._attributes(attributes)
        except Exception as exc:
            internal_error("redaction", exc)
            return {"redaction": marker("error")}

    def redact_span(
        self, name: str, attributes: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        """A span's name and attributes, redacted, with one look at the environment for both (the
        session writer's hot path)."""
        try:
            self._refresh()
            shown = self._text(name) if type(name) is str else self._value(name, 0)
        except Exception as exc:
            internal_error("redaction", exc)
            shown = marker("error")
        if not attributes:
            return shown, None
        try:
            return shown, self._attributes(attributes)
        except Exception as exc:
            internal_error("redaction", exc)
            return shown, {"redaction": marker("error")}

    def redact_span_hiding_text(
        self, name: str, attributes: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        """:meth:`redact_span` with message text (:mod:`otel_agent_trace.message_text`: prompts,
        answers, a framework's ``gen_ai.input.messages`` …) reduced to its length and SHA-256: the
        shareable tier without content capture. Judged per key with the rest of the key, so a
        span with no message text pays nothing for the rule."""
        try:
            self._refresh()
            shown = self._text(name) if type(name) is str else self._value(name, 0)
        except Exception as exc:
            internal_error("redaction", exc)
            shown = marker("error")
        if not attributes:
            return shown, None
        try:
            return shown, self._attributes(attributes, True)
        except Exception as exc:
            internal_error("redaction", exc)
            return shown, {"redaction": marker("error")}

    def _attributes(self, attributes: Mapping[str, Any], hide_text: bool = False) -> dict[str, Any]:
        """Each ``key: value`` as :meth:`_pair` redacts it, the common cases without it.

        A key is judged once (:meth:`_key_state`). Under a secret-looking key a value is replaced
        whole, whatever its text; under a plain one a number, boolean or ``None`` stays, and a
        string that was seen before comes from the memo. New strings (an id, a URL) are checked
        together, in one prefilter pass over them joined by newlines: a match in one is a match in
        the joined text (the prefilter has no ``^`` or look-behind, and where it accepts ``$`` it
        also accepts a newline), so a clean join means each keeps its text but for the home
        prefix; otherwise each takes every rule. Keys whose strings keep being new (ids, URLs)
        stop filling the memo. Sequences (command lines, headers) and anything else take
        :meth:`_pair`, memoised. A key holding message text (state 3) never enters a memo: with
        ``hide_text`` its value becomes its digest; otherwise it is redacted like a plain one."""
        clean = self._prefilter
        if clean is None or self._user:
            return self._memoised_attributes(attributes, hide_text)
        seen = self._seen
        states = self._key_states
        out: dict[str, Any] = {}
        new: list[tuple[str, str]] | None = None  # new strings: shown after the loop, checked at once
        renamed = False
        for key, value in attributes.items():
            kind = type(value)
            if kind is str:  # most: a value this key had before
                texts = seen.get(key)
                if texts is not None:
                    shown = texts.get(value)
                    if shown is not None:
                        out[key] = shown
                        continue
            state = states.get(key)
            if state is None:
                state = self._key_state(key)
            if state == 3:  # message text
                if hide_text:
                    out[key] = None if value is None else message_text.digest(value)
                    continue
                if kind is str:
                    if new is None:
                        new = [(key, value)]
                    else:
                        new.append((key, value))
                    out[key] = value
                    continue
                out[key] = self._pair(key, value)[1]
                continue
            if state == 0:
                if kind is str:
                    if new is None:
                        new = [(key, value)]
                    else:
                        new.append((key, value))
                    out[key] = value  # its place in the order
                    continue
                if value is None or kind in _SCALARS:
                    out[key] = value
                    continue
            elif state > 0:  # a header, a token: replaced whole, whatever its text
                shown = self._under_secret_key(key, value, state == 2, 0)
                out[key] = list(shown) if type(shown) is list else shown
                continue
            hit = self._memoised_pair(key, value, (key, kind, tuple(value) if kind is list else value))
            shown = hit[1]
            out[hit[0]] = list(shown) if type(shown) is list else shown  # a copy: never shared
            renamed = renamed or hit[0] != key
        if new is None:
            return out
        if renamed:  # a key shown as another key may be (`$HOME` and `~`): the later one wins
            return self._memoised_attributes(attributes)
        try:
            ok = clean(new[0][1] if len(new) == 1 else "\n".join([text for _, text in new]))
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8; the rules take it
            ok = False
        for key, text in new:
            if not ok:
                shown = self._pair(key, text)[1]
            else:
                shown = self._home_prefix(text)
            out[key] = shown
            if states.get(key) != 3:  # message text is never remembered (see hide_text)
                self._see(key, text, shown)
        return out

    def _see(self, key: str, text: str, shown: str) -> None:
        """Remember how ``text`` under the plain key ``key`` is shown: in all at most 8192 texts
        of up to 1 KB; a key whose texts keep being new (256 of them: ids, URLs) is not
        remembered at all, so that the memo holds what comes again."""
        misses = self._misses.get(key, 0)
        if misses >= 256 or len(text) > 1024:
            return
        _remember(self._misses, key, misses + 1, 4096)
        if misses + 1 >= 256:
            self._seen.pop(key, None)
            return
        if self._seen_count >= 8192:
            self._seen.clear()
            self._seen_count = 0
        texts = self._seen.get(key)
        if texts is None:
            texts = self._seen[key] = {}
        texts[text] = shown
        self._seen_count += 1

    def _memoised_attributes(self, attributes: Mapping[str, Any], hide_text: bool = False) -> dict[str, Any]:
        """:meth:`_attributes` with no prefilter (user patterns, or no RE2): each pair memoised
        (message text never: it is not repeated, and must not come back from a memo hidden)."""
        out: dict[str, Any] = {}
        states = self._key_states
        for key, value in attributes.items():
            kind = type(value)
            state = states.get(key)
            if state is None:
                state = self._key_state(key)
            if state == 3:
                if hide_text:
                    out[key] = None if value is None else message_text.digest(value)
                else:
                    out[key] = self._pair(key, value)[1]
                continue
            if (kind is int or kind is float) and state >= 0:  # the key decides (tokens, pids, ports)
                out[key] = self._under_secret_key(key, value, state == 2, 0) if state else value
                continue
            # A str by its value (most attributes), a sequence (headers, args) by its items.
            pair = (key, value) if kind is str else (key, kind, tuple(value) if kind is list else value)
            hit = self._memoised_pair(key, value, pair)
            shown = hit[1]
            out[hit[0]] = list(shown) if type(shown) is list else shown  # a copy: never shared
        return out

    def _memoised_pair(self, key: Any, value: Any, pair: Any) -> tuple[Any, Any]:
        """:meth:`_pair` of ``key: value``, remembered under ``pair`` (unless it is unhashable)."""
        try:
            hit = self._pairs.get(pair)
        except TypeError:  # unhashable items: no memo
            return self._pair(key, value)
        if hit is None:
            hit = self._pair(key, value)
            _remember(self._pairs, pair, hit, 8192)
        return hit

    def _key_state(self, key: Any) -> int:
        """For :meth:`_attributes`: 0 a plain key, 1 a secret-looking one, 2 one whose
        numbers are secret too, 3 one holding message text (:mod:`otel_agent_trace.message_text`),
        -1 a key that redaction changes (or not a string)."""
        state = -1
        if type(key) is str and "<redacted:" not in key and self._text(key) == key:
            if message_text.is_text_attribute(key):
                state = 3
            else:
                secret, numeric = _key_verdict(key)
                state = (2 if numeric else 1) if secret else 0
        _remember(self._key_states, key, state, 4096)
        return state

    def redact_preview(self, value: Any, limit: int) -> Any:
        """Redacted, then cut to about ``limit`` characters (``…[+N chars]``). Only a bounded head
        of a long text is redacted: cost stays bounded, and nothing cut in half can leak."""
        try:
            self._refresh()
            if not isinstance(value, str):
                if value is None or isinstance(value, (bool, int, float)):
                    return value
                text = fmt.dumps_canonical(value).decode("utf-8", "replace")
                if len(text) <= limit:
                    return self._value(value, 0)  # short: keep the structure
                value = text
            if len(value) <= limit:
                return self._text(value)
            margin = max(128, self._max_secret + 16)
            head_len = limit + margin + 64
            while head_len < len(value):
                red, clean = self._checked_text(value[:head_len])
                # Unredacted leftovers of a secret cut at head_len lie in red's last `margin` chars.
                if len(red) - margin >= limit:
                    return self._cut_and_recheck(red, limit, len(value) - head_len, clean)
                head_len *= 4
            return self._cut_and_recheck(self._text(value), limit, 0, False)
        except Exception as exc:
            internal_error("redaction", exc)
            return marker("error")

    def _cut_and_recheck(self, text: str, limit: int, unread: int, clean: bool) -> str:
        """``text`` cut by :func:`_cut_at` (``unread`` more characters left out), with the line of the
        cut redacted again: a cut is a new context for the rules near it (all within a line).

        When the prefilter found nothing in the text before it was cut (``clean``), a piece of it
        holds no token's needle, no key word before a separator, no flag with its value, no user
        info, no Bearer: cutting cannot make a rule match, but for the home prefix, which may now
        end the line (``/rootfs`` cut to ``/root``)."""
        cut, suffix = _cut_at(text, limit, unread)
        i = text.rfind("\n", 0, cut) + 1
        tail = text[i:cut] + suffix
        return text[:i] + (self._home_prefix(tail) if clean else self._fresh_text(tail))

    def _pair(self, key: Any, item: Any) -> tuple[Any, Any]:
        """One ``key: item`` of a dict, as :meth:`_value` redacts it inside the dict."""
        if isinstance(key, str):
            key = self._text(key)  # judged as written, so a second pass judges the same
            secret, numeric = _key_verdict(_MARKER_SUB.sub(" ", key) if "<redacted:" in key else key)
            if secret:
                return key, self._under_secret_key(key, item, numeric, 0)
        return key, self._value(item, 1)

    def _value(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if depth > 32:
            return marker("too_deep")
        if isinstance(value, dict):
            if depth == 0:  # a flat dict (tool arguments, event attributes) as span attributes
                return self._attributes(value)
            out = {}
            for key, item in value.items():
                if isinstance(key, str):
                    key = self._text(key)  # judged as written, so a second pass judges the same
                    secret, numeric = _key_verdict(_MARKER_SUB.sub(" ", key) if "<redacted:" in key else key)
                    if secret:
                        out[key] = self._under_secret_key(key, item, numeric, depth)
                        continue
                out[key] = self._value(item, depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            out_list = [self._value(item, depth + 1) for item in value]
            _flag_values(out_list, self._allow)
            return out_list if isinstance(value, list) else tuple(out_list)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return value  # written as a size and hash, never as content
        converted = fmt.json_default(value)
        if converted is value:
            return marker("object")
        return self._value(converted, depth + 1)

    def _hides(self, text: str) -> bool:
        """Whether a string under a secret-looking key is replaced (not empty, a marker, allowed)."""
        return bool(text) and not is_marker(text) and text not in self._allow

    def _under_secret_key(self, key: str, item: Any, numeric: bool, depth: int) -> Any:
        if depth > 32:
            return marker("too_deep")
        if isinstance(item, str):
            return self._key_marker(key) if self._hides(item) else item
        if item is None or isinstance(item, bool):
            return item
        if isinstance(item, (int, float)):
            return self._key_marker(key) if numeric else item
        if isinstance(item, (list, tuple)):  # (headers: strings, told apart without recursion)
            return [
                (self._key_marker(key) if self._hides(i) else i)
                if type(i) is str
                else self._under_secret_key(key, i, numeric, depth + 1)
                for i in item
            ]
        if isinstance(item, dict):  # credentials: {...}: every leaf
            return {
                (self._text(k) if isinstance(k, str) else k): self._under_secret_key(key, v, True, depth + 1)
                for k, v in item.items()
            }
        if isinstance(item, (bytes, bytearray, memoryview)):
            return item
        return self._key_marker(key)

    def _key_marker(self, key: str) -> str:
        """``<redacted:key:NAME>``, or ``<redacted:key>`` when the name itself holds a secret."""
        found = self._key_markers.get(key)
        if found is None:
            hidden = not key or "<" in key or self._hidden_re.search(key) is not None
            found = marker("key") if hidden else marker("key:" + key)
            _remember(self._key_markers, key, found, 4096)
        return found

    def _text(self, text: str) -> str:
        if len(text) < 5 and not self._user:
            return text
        cache = self._cache
        found = cache.get(text)
        if found is not None:
            return found
        out = self._fresh_text(text)
        if len(text) <= 1024:  # longer text (a tool's output) rarely comes again: not remembered
            _remember(cache, text, out, 8192)
        return out

    def _fresh_text(self, text: str) -> str:
        """``text`` redacted, without the memo (for text that does not come again: the head of a
        preview, where it was cut)."""
        return self._checked_text(text)[0]

    def _checked_text(self, text: str) -> tuple[str, bool]:
        """``text`` redacted without the memo, and whether the prefilter found it clean."""
        if len(text) < 5 and not self._user:
            return text, False
        clean = False
        prefilter = self._prefilter
        if prefilter is not None and not self._user:
            try:
                clean = prefilter(text)
            except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8; the rules take it
                clean = False
        if clean:  # no rule would change it (see _PREFILTER_STATIC), but the home prefix
            return self._home_prefix(text), True
        out = text
        for _ in range(4):  # a replacement changes its neighbours' context: repeat until stable
            before = out
            out, settled = self._once(out)
            if settled or out == before:
                break
        return out, False

    def _home_prefix(self, text: str) -> str:
        """Clean ``text`` as redaction shows it: the home prefix replaced (not in text under 5)."""
        if self._home_re is None or len(text) < 5 or self._home not in text:
            return text
        return self._home_re.sub("~", text)

    def _once(self, text: str) -> tuple[str, bool]:
        """One pass of every rule, each only when the text holds what it needs; and whether the
        result is settled (nothing but the home prefix changed, which no rule reacts to)."""
        replace = self._replace
        start = text
        has = text.__contains__
        if self._env_values and any(map(has, self._env_values)):
            text = self._env_re.sub(replace, text)  # type: ignore[union-attr]
        passes = {i for needle, i in _TOKEN_NEEDLE_PASS if has(needle)}
        for i in sorted(passes):  # in their order: sk-ant- before sk-
            kind, _, pattern = _TOKEN_PASSES[i]
            text = pattern.sub(lambda m, kind=kind: self._token(m, kind), text)
        if "://" in text and "@" in text:
            text = _USERINFO_RE.sub(replace, text)
        low = text.lower()
        if "bearer" in low:
            text = _BEARER_RE.sub(replace, text)
            low = text.lower()
        if "=" in text or ":" in text or "-" in text:
            text = self._keyed_lines(text, low)
        # "~" for the home prefix creates no new context for any rule: no second pass for it alone.
        settled = text is start or text == start
        if self._home_re is not None and self._home in text:
            text = self._home_re.sub("~", text)
        for kind, pattern in self._user:
            before = text
            text = pattern.sub(lambda m, kind=kind: self._replace_user(m, kind), text)
            settled = settled and text == before
        return text, settled

    def _keyed_lines(self, text: str, low: str) -> str:
        """The key-based rules, on the lines where a key word really is a secret key followed by
        its separator (checked with string operations: a regex scan of every line is slow)."""
        if len(low) != len(text):  # case folding changed lengths: scan it all
            return _KEYED_RE.sub(self._replace, text)
        starts: set[int] = set()
        words: list[int] = []  # where each key word is (for _keyed_line)
        for word in _KEY_NEEDLES:
            i = low.find(word)
            while i != -1:
                words.append(i)
                line = text.rfind("\n", 0, i) + 1
                if line not in starts and _secret_key_at(text, i, len(word)):
                    starts.add(line)
                i = low.find(word, i + 1)
        if not starts:
            return text
        words.sort()
        out, last = [], 0
        for line in sorted(starts):
            end = text.find("\n", line)
            end = len(text) if end == -1 else end
            out.append(text[last:line])
            at = words[bisect.bisect_left(words, line) : bisect.bisect_left(words, end)]
            out.append(self._keyed_line(text[line:end], low[line:end], [i - line for i in at]))
            last = end
        out.append(text[last:])
        return "".join(out)

    def _keyed_line(self, line: str, low: str, words: list[int] | None = None) -> str:
        """``_KEYED_RE.sub(self._replace, line)``, with the regex searched only from near key words.

        Python's ``re`` tries every alternative at every position (≈ 14 µs for a 100-character
        URL). But a key rule's match holds a key word (its ``_KEY_HINT``) after at most 64 key
        characters (word characters, ``.``, ``-``, space) and 4 quotes, backslashes or dashes
        from its start, and a marker starts with ``<redacted:``. So a match that starts at or
        after ``pos`` starts no earlier than the earliest such window of a word at or after
        ``pos``, and searching from there finds the match ``sub`` would. In an ASCII line ``low``
        finds every key word the case-insensitive regex does; other lines (the regex also folds
        ``ſ``, ``K``, ``ı``) take the plain ``sub``."""
        if not line.isascii():
            return _KEYED_RE.sub(self._replace, line)
        if words is None:  # where each key word is
            words = []
            for word in _KEY_NEEDLES:
                i = low.find(word)
                while i != -1:
                    words.append(i)
                    i = low.find(word, i + 1)
        windows: list[tuple[int, int]] = []  # (key word position, earliest start of a match)
        for i in words:
            run = _SPACED_KEY_RUN.match(line[max(0, i - 64) : i][::-1]).end()  # type: ignore[union-attr]
            windows.append((i, max(0, i - run - 4)))
        i = line.find("<redacted:")
        while i != -1:
            windows.append((i, i))
            i = line.find("<redacted:", i + 1)
        if not windows:
            return line
        windows.sort()
        earliest = [s for _, s in windows]  # the earliest start among this window and later ones
        for w in range(len(earliest) - 2, -1, -1):
            earliest[w] = min(earliest[w], earliest[w + 1])
        out: list[str] = []
        pos = w = 0
        search = _KEYED_RE.search
        while True:
            while w < len(windows) and windows[w][0] < pos:
                w += 1
            if w == len(windows):
                break
            m = search(line, max(pos, earliest[w]))
            if m is None:
                break
            out.append(line[pos : m.start()])
            out.append(self._replace(m))
            pos = m.end()
        if not out:
            return line
        out.append(line[pos:])
        return "".join(out)

    def _token(self, m: re.Match[str], kind: str) -> str:
        found = m.group(0)
        if found in self._allow or (kind == "openai_key" and _OPENSSH_NAME.fullmatch(found)):
            return found
        return marker(kind)

    def _replace_user(self, m: re.Match[str], kind: str) -> str:
        found = m.group(0)
        if m.group("oat_marker") is not None or found in self._allow or not found:
            return found
        return kind

    def _replace(self, m: re.Match[str]) -> str:
        group = m.lastgroup
        found = m.group(0)
        if group == "marker":  # ours, unless a secret hides in it (``<redacted:sk-…>``)
            return marker("hidden") if self._hidden_re.search(found, 10) else found
        if group == "env":
            return marker("env:" + self._env_names.get(found, "secret"))
        if group == "home":
            return "~"
        if group == "bearer":  # but words: "the Bearer credential", "jwt-bearer exchange"
            token = found[len(m.group("bearer_p")) :]
            if token in self._allow or _reads_as_words(token):
                return found
            return m.group("bearer_p") + marker("bearer")
        if group == "userinfo":
            return (
                found
                if found[:-1] in self._allow or not _userinfo_secret(found[:-1])
                else (marker("userinfo") + "@")
            )
        if group == "kv":
            return self._keyed(m, "kv_k", "kv_v", quoted=False)
        if group == "cli":
            return self._keyed(m, "cli_k", "cli_v", quoted=True)
        if group == "kva":
            return self._keyed(m, "kva_k", "kva_v", quoted=True)
        return found

    def _keyed(self, m: re.Match[str], key_group: str, value_group: str, *, quoted: bool) -> str:
        """A ``key <sep> value`` match: the value becomes a marker when the key is secret-looking;
        otherwise the value is scanned like any other text."""
        key = m.group(key_group)
        value = m.group(value_group)
        start = m.start(value_group) - m.start()
        end = m.end(value_group) - m.start()
        found = m.group(0)
        name = key.lstrip("-")
        if m.start() > 0 and m.string[m.start() - 1] == "\\" and not is_secret_key(name):
            name = _unescaped(name)  # "…\\npassword = \\"…\\"" in JSON: the key is password
        if self._hidden_re.search(found, 0, start):  # a secret in the key itself
            head = self._text(found[:start])
            found, start, end = head + found[start:], len(head), len(head) + (end - start)
            name = ""
        secret = is_secret_key(name) or (
            name.lower() == "key" and m.start() > 0 and m.string[m.start() - 1] in "?&;"
        )
        inner = value
        lead = trail = ""
        if quoted and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            lead, inner, trail = value[0], value[1:-1], value[0]
        elif quoted and value.startswith("\\"):  # \"value\" (in escaped text: JSON)
            escaped = _ESCAPED_LITERAL.fullmatch(value)
            if escaped is not None:
                lead, inner, trail = escaped.groups()
        if secret and inner and not is_marker(inner) and inner not in self._allow:
            if _SCHEME_ONLY.fullmatch(inner):  # "Authorization: Bearer" alone: nothing to hide
                return found
            if not _holds_secret(m, key_group, name, inner, lead[-1:] or m.group(0)[start - 1 : start]):
                return found[:start] + self._text(value) + found[end:]  # code, not a secret
            return found[:start] + lead + self._key_marker(name) + trail + found[end:]
        return found[:start] + self._text(value) + found[end:]


# --- values under secret-looking keys that are code, not secrets ---------------------------------
#
# Coding agents read and write source code, where ``api_key = os.getenv("API_KEY")``,
# ``password=password,`` and ``auth: BasicAuth | None = None`` are everywhere. A value under a
# secret-looking key in text is kept when it cannot be a credential: code (a call, a subscript,
# an attribute, a name, a comparison, a literal being opened), a placeholder (``%s``, ``{token}``,
# ``$TOKEN``, ``...``, ``****``, ``REDACTED``), or, quoted or not, a path, a URL, an environment
# variable's name, a number under a key that is not a password's (also a hex literal that fits a
# machine word, ``0x08074b50``, and dotted numbers: an OID, a version, an IP address), text under
# 6 characters (as for environment values) or words (``your-api-key``, ``refresh_token``,
# ``BasicAuth``, ``letmein``, ``CRAM-MD5``): a credential holds a digit, a symbol, or mixed case
# that is not camel case. Where the text is not code (a URL query, an environment file or
# ``export``, an HTTP header, a command-line flag) only placeholders are kept, and in a header a
# word of one case; in a URL also a short number under a key whose numbers are not secret, and a
# name under ``key`` alone (``?key=pydoc``). A cookie is judged pair by pair
# (:func:`_cookie_secret`). Structured values (a dict's value under a secret-looking key) are
# always replaced.

_PLACEHOLDER = re.compile(
    r"%(?:\([\w.]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifxa]|\{[\w!:.\[\]]*\}|\$\{|\$\(|\$[A-Z_][A-Z0-9_]*\b"
    r"|%[A-Z_][A-Z0-9_]*%|\.\.\.|\u2026|<[A-Za-z_][\w .\-]*>|^[{\[(]"
    r"|\*{3,}|\u2022{3,}"  # masked already: xoxb-***, sk-••••
    r"|^(?i:redacted|x{3,}|placeholder|your[-_ ][\w\- ]*)$"
)
_CONSTANTS = frozenset({"true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off"})
_NOT_A_CREDENTIAL = re.compile(
    r"(?:\.{0,2}/|~/)\S*"  # a path
    r"|[A-Za-z][A-Za-z0-9+.\-]*://\S*"  # a URL (its user-info and query are checked on their own)
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # an environment variable's name: AWS_SECRET_ACCESS_KEY
    r"|(?:(?:bold|italic|underline|no\w+|bg:|border:) ?)*#[0-9A-Fa-f]{3,8}(?: [\w: #]*)?"  # a colour
    r"|\*{1,2}[A-Za-z_]\w*"  # *args, **kwargs
)
# A number as code writes it: decimal, with dots (a float, a version, an IP address, an OID such as
# 1.3.6.1.5.5.7.3.1), or a hex, octal or binary literal that fits a machine word (0x08074b50): not a
# credential unless its key is a password's. Longer hex literals are key material (an AES key).
_NUMBER = re.compile(
    r"[-+]?(?:\d[\d_]*(?:\.\d+)*(?:[eE][-+]?\d+)?|0[xX](?:_?[0-9A-Fa-f]){1,16}|0[oO][0-7_]+|0[bB][01_]+)"
)
_CALL_OR_ITEM = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*[(\[]")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_LETTERS_DIGITS = re.compile(r"_*([A-Za-z]+)(\d{1,3})_*")
_OPERAND = re.compile(r"\d+|[A-Za-z_][\w.]*(?:\([A-Za-z_][\w.]*)?\(?")
_MODULE_NAME = re.compile(r"_*[A-Za-z]+\d{1,5}")
_OPERATOR = re.compile(r"[*+/%]")
_ESCAPE = re.compile(r"\\[ntr\"'\\]")
_PIECE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VOWELS = frozenset("aeiouyAEIOUY")
# Short words without a vowel that programmers write (SecretStr, AuthCtx, HttpCfg).
_ABBREVIATIONS = frozenset(
    "str ctx cls fn msg cfg req src dst cmd pkg mgr ptr tmp db http xml rpc grpc tls ssl jwt sdk pwd crt"  # noqa: SIM905
    " kms sts sso std sql css html rgb mfa dns tcp udp mcp pss rsa dsa md sha hmac pb ws kv vm js".split()
)
# Words that follow a flag in prose about it ("the --password option"), not its value.
_PROSE_AFTER_FLAG = frozenset(
    "option options flag flags argument arguments parameter parameters and or is are was to instead"  # noqa: SIM905
    " can must should will if when with without for of in on the a an".split()
)
_WORD_SEPARATORS = re.compile(r"[-.~:/ ',]+")
_SCHEME_PREFIX = re.compile(r"(?i:bearer|basic|token|digest)[ \t]+")


def _name_pieces(word: str) -> tuple[int, int] | None:
    """(word pieces of 3+ letters, digits) of an identifier that reads as a programmer's name
    (``api_key``, ``AWS_ACCESS_KEY_ID``, ``BasicAuth``, ``AWSAccessKeyId``, ``SecretStr``), or
    ``None`` for one that reads as a random string (``cliXkQpZrTbWmN``, ``aB3kZ9``): its camel-case
    pieces each hold a vowel (but common abbreviations; an acronym: up to 5 capitals), are about
    3 characters or more on average, and a single lower-case letter is not one of them."""
    words = digits = 0
    for chunk in word.split("_"):
        if not chunk:
            continue
        tail = _LETTERS_DIGITS.fullmatch(chunk)
        if tail is not None:  # p50, s3, sha256: letters and a short number
            chunk = tail.group(1)
            digits += len(tail.group(2))
        if chunk.isdigit() and len(chunk) <= 3:  # for_24_hours
            digits += len(chunk)
            continue
        if chunk.isalpha() and (chunk.islower() or chunk.isupper()):
            if len(chunk) > 40:  # no word is that long
                return None
            words += len(chunk) >= 3
            continue
        pieces = _PIECE.findall(chunk)
        if len(pieces) > 1 + len(chunk) // 3:
            return None
        for k, piece in enumerate(pieces):
            if piece.isdigit():  # a number ends a word: sha256With, PKCS7Private, not a1b or 1ab
                if k == 0 or (k + 1 < len(pieces) and not pieces[k + 1][0].isupper()):
                    return None
                digits += len(piece)
            elif piece.isupper():
                if len(piece) > 5:
                    return None
                words += len(piece) >= 3
            elif len(piece) == 1:
                if len(pieces) > 1:
                    return None
            elif _VOWELS.isdisjoint(piece) and piece.lower() not in _ABBREVIATIONS:
                return None
            else:
                words += len(piece) >= 3
    return words, digits


def _is_name(word: str) -> bool:
    """Whether an identifier reads as a name in code, not as a credential (``hunter2``,
    ``s3cr3t``, a random string): words, with digits only beside two words or more
    (``sha256WithRSAEncryption``) or as a short tail of a ``_``-separated part (``x509_cert``)."""
    if not word.isascii() or len(word) > 100:
        return False
    found = _name_pieces(word)
    if found is None:
        return False
    words, digits = found
    if not digits:
        return True
    if words >= 2 and digits * 2 <= len(word) - digits:
        return True
    return "_" in word.strip("_")


def _reads_as_words(text: str) -> bool:
    """Names joined by ``-``, ``.``, ``:``, ``/``, ``~``, ``'``, ``,`` or spaces (``your-api-key``,
    ``urn:ietf:params:oauth:grant-type:jwt-bearer``, ``UTF-8-SIG``, ``a secret``), not a token;
    digits only beside two words or more, a common abbreviation counting as one (``CRAM-MD5``;
    ``zz-plain-1`` is a credential)."""
    parts = [p for p in _WORD_SEPARATORS.split(text) if p]
    if not parts:
        return False
    words = 0
    with_digits = parts[-1].isdigit()  # a number at the end: plain-pass-77, zz-plain-1
    if with_digits:
        return False
    for part in parts:
        if part.isdigit():
            with_digits = True
            continue
        if _IDENTIFIER.fullmatch(part) is None or not part.isascii():
            return False
        tail = _LETTERS_DIGITS.fullmatch(part)
        if tail is not None:
            with_digits = True
            part = tail.group(1)
        if not _is_name(part):
            return False
        words += len(part) >= 3 or part.lower() in _ABBREVIATIONS  # CRAM-MD5, HMAC-SHA1
    return not with_digits or words >= 2


def _code_value(value: str, numeric: bool) -> bool:
    """Whether a value in code or prose (not quoted) cannot be a secret."""
    if not value or value[0] in "=:([{`*!":
        return True  # a comparison or walrus (==, :=), a call, a literal opened, markup
    if value.startswith(('f"', "f'", 'r"', "r'", 'b"', "b'", 'rf"', "rf'")):
        return True  # a string prefix: the string follows, checked on its own
    value = _ESCAPE.split(value, 1)[0]  # text escaped in JSON: the value ends at \n or \"
    if not value or len(value) < MIN_SECRET_VALUE or value.lower() in _CONSTANTS:
        return True
    return _names_code(value, numeric)


def _names_code(value: str, numeric: bool) -> bool:
    """Whether ``value`` is a call, a subscript, an attribute, a name, an expression of them, a
    number under a key that is not a password's, or words."""
    if _CALL_OR_ITEM.match(value) is not None:
        return True  # os.getenv(…, os.environ[…, getattr(…
    if _DOTTED_NAME.fullmatch(value):  # self._auth_token, Keyword.Type, httpx2.Auth, ed25519.X
        return all(_MODULE_NAME.fullmatch(p) or _is_name(p) for p in value.split("."))
    if _IDENTIFIER.fullmatch(value):  # api_key, None, BasicAuth
        return _is_name(value)
    if _NUMBER.fullmatch(value):
        return not numeric  # token_count = 0, but password = 1234
    operands = _OPERATOR.split(value)
    if len(operands) > 1 and all(_OPERAND.fullmatch(p) for p in operands):  # 1*tchar, a+len(
        return all(p.isdigit() or all(_names_code(n, numeric) for n in p.split("(") if n) for p in operands)
    return _reads_as_words(value)


def _literal_value(value: str, numeric: bool, data: bool) -> bool:
    """Whether a quoted literal cannot be a credential. In data (``"key": "value"``, JSON or a
    dict literal) a mixed-case word is taken for a credential: the camel-case check lets through
    about 1 in 200 random strings of 16 letters and digits, and a name there is rare."""
    if len(value) < MIN_SECRET_VALUE or value.lower() in _CONSTANTS or _NOT_A_CREDENTIAL.fullmatch(value):
        return True
    if _CAMEL_CASED.search(value) and _IDENTIFIER.fullmatch(value) and (data or not _camel_words(value)):
        return False
    return _names_code(value, numeric)


_CAMEL_CASED = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_CONSONANTS4 = re.compile(r"[^aeiouyAEIOUY\d_]{4}")


def _camel_words(value: str) -> bool:
    """Whether each camel-case piece of 3 letters or more reads as a word (``AWSAccessKeyId``,
    ``CustomPrivateKeySign``): a vowel in every 4 letters, no 4 consonants in a row, an acronym
    of up to 4 capitals with a vowel (or a common abbreviation). A quoted random string passes
    about 1 time in 500, against 1 in 25 for the check of bare names."""
    for piece in _PIECE.findall(value):
        if len(piece) < 3 or piece.isdigit() or piece.lower() in _ABBREVIATIONS:
            continue
        vowels = sum(c in _VOWELS for c in piece)
        if piece.isupper():
            if len(piece) > 4 or not vowels:
                return False
        elif not vowels or vowels * 4 < len(piece) or _CONSONANTS4.search(piece):
            return False
    return True


def _holds_secret(m: re.Match[str], key_group: str, name: str, inner: str, quote: str) -> bool:
    """Whether the value ``inner`` (unquoted) under the secret-looking key ``name`` of the key
    rule match ``m`` is a secret (see the comment above)."""
    at = m.start()
    text = m.string
    in_query = at > 0 and text[at - 1] in "?&;"
    numeric = _key_verdict(name)[1]
    if in_query and inner.isalnum() and not inner.isalpha():
        # ?api_key=K123456: the common case, without the checks below; but a short number under
        # a key whose numbers are not secret is a count or an id (;cookie=1234), as in code
        return numeric or not inner.isdigit() or len(inner) >= MIN_SECRET_VALUE
    if (
        name.lower().endswith("cookie")
        and key_group != "cli_k"
        and "=" in inner
        and _CALL_OR_ITEM.match(inner) is None  # cookie: http.cookies.BaseCookie[str] = …: code
    ):
        if key_group == "kv_k" and m.end("kv_v") == m.end():
            return True  # "cookie": "… that runs to the end (a preview's head): not all of it is seen
        return _cookie_secret(inner)  # Cookie: a=b; c=d, document.cookie = "a=b": pair by pair
    if _PLACEHOLDER.search(inner):
        return False  # "…", "****", "%s", "{token}", "$TOKEN", "<your key>"
    inner = inner.rstrip("`.,;:!?")  # the end of a sentence, markdown
    if not inner or _SCHEME_ONLY.fullmatch(inner) or not any(c.isalnum() for c in inner):
        return False
    if _PLACEHOLDER.search(inner):
        return False
    if key_group == "kv_k" and m.end("kv_v") == m.end():
        return True  # "token": "… that runs to the end (a preview's head): not all of it is seen
    if quote in ('"', "'"):  # a quoted literal
        return not _literal_value(inner, numeric, key_group == "kv_k")
    if inner.lower() in _CONSTANTS or inner[0] in "=:":
        return False  # password == other, token := next(…), ::
    if key_group == "cli_k":  # --password hunter2, but "the --password option"
        return inner.lower() not in _PROSE_AFTER_FLAG
    if in_query:  # a URL query parameter: its value goes, whatever it looks like; but "key"
        # alone is a secret only by its place, and a name under it is a lookup key (?key=pydoc)
        return name.lower() != "key" or not _is_name(inner)
    separator = m.group("kva_s")
    unquoted_key = not m.group("kva_q")
    if separator == "=" and unquoted_key:
        after = m.end()
        if (after == len(text) or text[after] in " \t\r\n\\") and _starts_a_command(text, at):
            return True  # KEY=value in an environment file or a shell command
    if ":" in separator and unquoted_key and (at == 0 or text[at - 1] in " \t\r\n\"'"):
        if name.lower().endswith("cookie"):  # Cookie: abc (no pairs: those are judged above)
            inner = inner.split(None, 1)[0].rstrip(",;)")
            return bool(inner) and not _code_value(inner, numeric)
        if "-" in name:  # X-Api-Key: value (an HTTP header): but a word of one case, a snake_name
            if (
                len(inner) < MIN_SECRET_VALUE
                or inner.isascii()
                and inner.isalpha()
                and (inner.islower() or inner.isupper())
            ):
                return False
            return not ("_" in inner and _IDENTIFIER.fullmatch(inner) and _is_name(inner))
    scheme = _SCHEME_PREFIX.match(inner)
    if scheme is not None:  # Authorization: Basic dXNlcjpwYXNz, but "token or default"
        rest = inner[scheme.end() :]
        return not _reads_as_words(rest) and not _code_value(rest, False)
    return not _code_value(inner, numeric)


_COOKIE_ITEM = re.compile(r'(?<![^\s;,"])([\w.\-$]+)[ \t]*=[ \t]*("[^"]*"?|[^\s;,"]*)')
_COOKIE_RUN = re.compile(r"[A-Za-z0-9_.\-+/%]{" + str(MIN_SECRET_VALUE) + ",}")
_COOKIE_CHUNKS = re.compile(r"[_.\-/]+")
_ESCAPED_BREAK = re.compile(r"\\+(?:[nrt]|[0-7]{3}|x[0-9A-Fa-f]{2})")  # \r\n, \054 (a comma)


def _cookie_secret(cookies: str) -> bool:
    """Whether a cookie header's value (``a=b; c="d"``, ``Set-Cookie: …`` lines, escaped quotes)
    holds a credential: a pair under a secret-looking name (``sessionid``, ``JSESSIONID``,
    ``auth_token``) with any value but a placeholder, or any value that looks generated (a run of
    6 or more token characters that is not names and numbers joined by ``_ . - /``: a session id,
    a hash, base64). Other values are an application's data (``lang=en``, ``Path=/``,
    ``CUSTOMER=WILE_E_COYOTE``, an expiry date): a session cookie is generated, never chosen."""
    cookies = _ESCAPED_BREAK.sub(" ", cookies.replace('\\"', '"'))  # \r\n between two headers
    for name, value in _COOKIE_ITEM.findall(cookies):
        value = value.strip('"')
        if value and is_secret_key(name.lstrip("$")) and not _PLACEHOLDER.search(value):
            return True
    for run in _COOKIE_RUN.findall(cookies):
        for chunk in _COOKIE_CHUNKS.split(run):
            if chunk and not chunk.isdigit() and not (_IDENTIFIER.fullmatch(chunk) and _is_name(chunk)):
                return True
    return False


# An OpenSSH key type ("sk-ecdsa-sha2-nistp256@openssh.com"), not an OpenAI key.
_OPENSSH_NAME = re.compile(r"sk-(?:ecdsa|ssh)-[a-z0-9\-]{0,40}")


def _userinfo_secret(userinfo: str) -> bool:
    """Whether a URL's ``user:password`` holds a secret: a password, unless a placeholder or words
    (``user:pass``, ``username:password``, ``***:***``, ``REDACTED:REDACTED``); a user name alone
    (``git@``) only when it looks like a token: as long as one, and not words."""
    user, colon, password = userinfo.partition(":")
    value = urllib.parse.unquote(password if colon else user)
    if not any(c.isalnum() for c in value) or _PLACEHOLDER.search(value):
        return False
    if not colon and len(value) < _TOKEN_LENGTH:
        return False  # a user name (ftp://%25parrot@, deploy@): a token is longer
    return not _reads_as_words(value)


# The shortest token used as a URL's user name alone that we look for (the catalogue's shapes
# are 16 characters or more after their prefix; GitHub's classic tokens are 40).
_TOKEN_LENGTH = 16


def _starts_a_command(text: str, at: int) -> bool:
    """Whether ``text[at:]`` starts an unindented line or a shell command (``export X=…``,
    ``&& X=…``), as ``KEY=value`` does in an environment file (also in escaped text: after a
    literal ``\\n``); an indented ``key=value`` is a keyword argument."""
    head = text[max(0, at - 64) : at]
    if not head or head.endswith(_LINE_BREAKS):
        return True
    stripped = head.rstrip(" \t")
    if stripped == head:
        return False
    for word in ("export", "set", "env"):
        if stripped.endswith(word):
            before = stripped[: -len(word)]
            if not before or not (before[-1].isalnum() or before[-1] in "_-."):
                stripped = before.rstrip(" \t")
                if not stripped:
                    return at <= 64
                return stripped.endswith(_LINE_BREAKS + _COMMAND_BREAKS)
    return stripped.endswith(_COMMAND_BREAKS)


_LINE_BREAKS = ("\n", "\\n", "\r")
_COMMAND_BREAKS = (";", "&&", "||", "|")


_ESCAPED_LITERAL = re.compile(r"(\\{1,3}[\"'])(.*?)(\\{1,3}[\"'])")
_KEY_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
_SPACED_KEY_RUN = re.compile(r"[A-Za-z0-9_.\- ]*")
_AFTER_KEY = re.compile(r"([\"'\\]{0,4})[ \t]*([:=]?)")


def _secret_key_at(text: str, i: int, n: int) -> bool:
    """Whether the key word at ``text[i:i+n]`` sits in a secret-looking key that a separator
    follows (``api_key=``, ``"Authorization": ``, ``--password``), as the key rules need."""
    b = _KEY_RUN.match(text, i + n, i + n + 64).end()  # type: ignore[union-attr]
    after = _AFTER_KEY.match(text, b)
    separated = after is not None and bool(after.group(2))
    if not separated and "-" not in text[max(0, i - 64) : i]:
        return False  # neither "key: value" nor "--flag value"
    a = i - _KEY_RUN.match(text[max(0, i - 64) : i][::-1]).end()  # type: ignore[union-attr]
    key = text[a:b]
    if key.startswith("-"):  # a command-line flag: --password x, --api-key=x
        return is_secret_key(key.lstrip("-"))
    if not separated:
        return False
    if after.group(1) and a > 0 and text[a - 1] == " ":  # type: ignore[union-attr]  # "api key": …
        k = a - _SPACED_KEY_RUN.match(text[max(0, a - 64) : a][::-1]).end()  # type: ignore[union-attr]
        if k > 0 and text[k - 1] in "\"'":
            key = text[k:b]
    if key.lower() == "key":
        return a > 0 and text[a - 1] in "?&;"
    return is_secret_key(key) or (a > 0 and text[a - 1] == "\\" and is_secret_key(_unescaped(key)))


def _unescaped(key: str) -> str:
    """A key after a literal ``\\n``, ``\\t`` or ``\\r`` (text escaped in JSON) without that
    letter: ``\\npassword=`` is ``password=`` on a new line."""
    return key[1:] if len(key) > 1 and key[0] in "ntr" else key


_FLAG_RE = re.compile(r"--?[A-Za-z][\w\-]{0,63}")


def _flag_values(items: list[Any], allow: frozenset[str]) -> None:
    """Command lines as lists (``["--password", "x"]``): a secret-looking flag's value goes."""
    for i in range(len(items) - 1):
        flag = items[i]
        if isinstance(flag, str) and flag.startswith("-") and _FLAG_RE.fullmatch(flag):
            name = flag.lstrip("-")
            value = items[i + 1]
            if (
                isinstance(value, str)
                and value
                and not value.startswith("-")
                and not is_marker(value)
                and value not in allow
                and is_secret_key(name)
            ):
                items[i + 1] = marker("key:" + name)


_SCHEME_ONLY = re.compile(r"(?i:bearer|basic|token|digest)")


def _cut_at(text: str, limit: int, unread: int = 0) -> tuple[int, str]:
    """Where to cut ``text`` to about ``limit`` characters (not inside a marker), and what to add
    to say what was left out (``unread`` more characters were never in ``text``)."""
    cut = min(limit, len(text))
    opened = text.rfind("<", max(0, cut - 130), cut)
    if opened != -1:
        whole = _MARKER_SUB.match(text, opened)
        if whole is not None and whole.end() > cut:
            cut = whole.end()
    rest = len(text) - cut + unread
    return cut, (f"…[+{rest} chars]" if rest > 0 else "")


# --- the process-wide redactor -------------------------------------------------------------

_default: Redactor | None = None
_default_lock = threading.Lock()
_api_patterns: list[tuple[str | re.Pattern[str], str]] = []
_api_allow: list[str] = []


def get_redactor() -> Redactor:
    """The process-wide redactor: environment, settings, and what the API added."""
    global _default
    current = _default
    if current is not None:
        return current
    with _default_lock:
        if _default is None:
            from otel_agent_trace.settings import get_settings

            settings = get_settings()
            redactor = Redactor(allow=[*settings.redact_allow, *_api_allow])
            for pattern in settings.redact_patterns:
                redactor.add_pattern(pattern)
            for pattern, kind in _api_patterns:
                redactor.add_pattern(pattern, kind)
            _default = redactor
        return _default


def reset_redactor(redactor: Redactor | None = None) -> None:
    """Use ``redactor`` from now on (``None``: rebuild from the environment and settings on next
    use; patterns and allowed values added through the API are kept)."""
    global _default
    _default = redactor


def add_pattern(pattern: str | re.Pattern[str], kind: str = "pattern") -> bool:
    """Redact matches of a regular expression in all shareable output (→ ``<redacted:KIND>``)."""
    _api_patterns.append((pattern, kind))
    return get_redactor().add_pattern(pattern, kind)


def allow(*values: str) -> None:
    """Never redact these exact strings (or the values of the environment variables so named)."""
    _api_allow.extend(values)
    get_redactor().allow(*values)


def redact(value: Any) -> Any:
    """Redact a string or a nested JSON-like value with the process-wide redactor."""
    return get_redactor().redact(value)


__all__ = [
    "Redactor",
    "add_pattern",
    "allow",
    "get_redactor",
    "is_secret_key",
    "is_secret_name",
    "marker",
    "redact",
    "reset_redactor",
]
