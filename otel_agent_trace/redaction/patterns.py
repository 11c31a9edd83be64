"""The token catalogue (known token shapes and the needles that say a text may hold one) and the
key-based rules of text (``"key": "value"``, ``--flag value``, ``Key: value``), as regular
expressions."""

from __future__ import annotations

import re

from .markers import MARKER_RE

# A key in text is only considered when it contains one of these (the words check decides).
_KEY_HINT = (
    r"(?=[\w.\- ]{0,64}?(?i:secret|pass(?!es)|pwd|token(?!s)|auth(?!or(?!i))|cookie|credential|key"
    r"|jwt|dsn|sig|sess|bearer|otp))"
)


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
TOKEN_PASSES = tuple((kind, _TOKEN_NEEDLES[kind], re.compile(src)) for kind, src in TOKEN_PATTERNS)
TOKEN_NEEDLE_PASS = tuple((n, i) for i, (_, needles, _) in enumerate(TOKEN_PASSES) for n in needles)
# Words one of which every key-based rule (JSON, headers, flags, cookies) needs, lower-cased.
KEY_NEEDLES = ("secret", "pass", "pwd", "token", "auth", "cookie", "credential", "key", "jwt", "dsn", "sig")
KEY_NEEDLES += ("sess", "bearer", "otp")

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
HOME_TAIL = r"(?=$|[/\s\"'`:;,)\]}>])"
BEARER_RE = re.compile(_BEARER)
USERINFO_RE = re.compile(_USERINFO)
KEYED_RE = re.compile("|".join([r"(?P<marker>" + MARKER_RE + ")", *_STRUCTURAL]))
