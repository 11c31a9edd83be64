"""The "nothing to redact here" check: one RE2 pass over a text."""

from __future__ import annotations

import re
from typing import Any

from otel_agent_trace._internal.guard import report_once

from .patterns import TOKEN_NEEDLE_PASS

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
PREFILTER_STATIC = "|".join(
    [
        _PREFILTER_KEYED,
        _PREFILTER_FLAG,
        # token shapes: each pattern's match holds one of its needles
        *(re.escape(needle) for needle, _ in TOKEN_NEEDLE_PASS),
        r"://[^\s/?#@<>\"'\\]+@",
        r"(?i:bearer)[ \t]",
        r"<redacted:",
    ]
)


def compile_prefilter(env_values: tuple[str, ...]) -> Any:
    """``clean(text) -> bool`` for a redactor with these environment secrets: whether no rule
    would change ``text`` (``None``: every text takes the rules)."""
    if _re2 is None:
        return None
    source = PREFILTER_STATIC
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
