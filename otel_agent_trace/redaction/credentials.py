"""Whether a value under a secret-looking key in text can be a credential (or is code, a
placeholder, words), and the other judgements the text rules ask for: cookies, URL user-info,
a key at a position, flag values."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from .markers import is_marker, marker
from .names import MIN_SECRET_VALUE, is_secret_key, key_verdict

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
    r"|\*{3,}|\u2022{3,}|x{5,}"  # masked already: xoxb-***, sk-••••, 6xxxxxxx
    r"|^\$\d+\b"  # an SQL statement's positional parameter: api_key = $3::text
    r"|^os\.environ/"  # a reference to a variable in LiteLLM's configuration: os.environ/NAME
    r"|^(?i:redacted|x{3,}|placeholder|your[-_ ][\w\- ]*)$"
)
_CONSTANTS = frozenset(
    {"true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off", "oauth1", "oauth2"}
)
# One alternative of a quoted type annotation: user_api_key: "UserAPIKeyAuth | None" (code, a type).
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # VERTEX_CREDENTIALS_TYPES
_TYPE_ALTERNATIVE = re.compile(r"[A-Za-z_][\w.]*(?:\[[\w.\[\], |]*\])?")
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
    " can must should will if when with without for of in on the a an requires needs".split()
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


def reads_as_words(text: str) -> bool:
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
    return reads_as_words(value)


def _literal_value(value: str, numeric: bool, data: bool) -> bool:
    """Whether a quoted literal cannot be a credential. In data (``"key": "value"``, JSON or a
    dict literal) a mixed-case word is taken for a credential: the camel-case check lets through
    about 1 in 200 random strings of 16 letters and digits, and a name there is rare."""
    if len(value) < MIN_SECRET_VALUE or value.lower() in _CONSTANTS or _NOT_A_CREDENTIAL.fullmatch(value):
        return True
    if "|" in value and _type_union(value):
        return True
    if _CAMEL_CASED.search(value) and _IDENTIFIER.fullmatch(value) and (data or not _camel_words(value)):
        return False
    return _names_code(value, numeric)


def _type_union(value: str) -> bool:
    """Whether ``value`` is a union of types, each ``None``, a constant's name or a name of words
    without digits (camel-cased ones as :func:`_camel_words` reads them): ``"Credentials | None"``,
    ``"TokenCredential | SupportsTokenInfo"``."""
    for part in value.split("|"):
        part = part.strip()
        if _TYPE_ALTERNATIVE.fullmatch(part) is None:
            return False
        head = part.split("[", 1)[0]
        if head == "None" or _CONSTANT_NAME.fullmatch(head):
            continue
        if any(c.isdigit() for c in head) or not all(_camel_words(p) for p in head.split(".")):
            return False
    return True


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


def holds_secret(m: re.Match[str], key_group: str, name: str, inner: str, quote: str) -> bool:
    """Whether the value ``inner`` (unquoted) under the secret-looking key ``name`` of the key
    rule match ``m`` is a secret (see the comment above)."""
    at = m.start()
    text = m.string
    in_query = at > 0 and text[at - 1] in "?&;"
    numeric = key_verdict(name)[1]
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
    if not inner or SCHEME_ONLY.fullmatch(inner) or not any(c.isalnum() for c in inner):
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
        return not reads_as_words(rest) and not _code_value(rest, False)
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
OPENSSH_NAME = re.compile(r"sk-(?:ecdsa|ssh)-[a-z0-9\-]{0,40}")


def userinfo_secret(userinfo: str) -> bool:
    """Whether a URL's ``user:password`` holds a secret: a password, unless a placeholder or words
    (``user:pass``, ``username:password``, ``***:***``, ``REDACTED:REDACTED``); a user name alone
    (``git@``) only when it looks like a token: as long as one, and not words."""
    user, colon, password = userinfo.partition(":")
    value = urllib.parse.unquote(password if colon else user)
    if not any(c.isalnum() for c in value) or _PLACEHOLDER.search(value):
        return False
    if not colon and len(value) < _TOKEN_LENGTH:
        return False  # a user name (ftp://%25parrot@, deploy@): a token is longer
    return not reads_as_words(value)


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


ESCAPED_LITERAL = re.compile(r"(\\{1,3}[\"'])(.*?)(\\{1,3}[\"'])")
_KEY_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
SPACED_KEY_RUN = re.compile(r"[A-Za-z0-9_.\- ]*")
_AFTER_KEY = re.compile(r"([\"'\\]{0,4})[ \t]*([:=]?)")


def secret_key_at(text: str, i: int, n: int) -> bool:
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
        k = a - SPACED_KEY_RUN.match(text[max(0, a - 64) : a][::-1]).end()  # type: ignore[union-attr]
        if k > 0 and text[k - 1] in "\"'":
            key = text[k:b]
    if key.lower() == "key":
        return a > 0 and text[a - 1] in "?&;"
    return is_secret_key(key) or (a > 0 and text[a - 1] == "\\" and is_secret_key(unescaped(key)))


def unescaped(key: str) -> str:
    """A key after a literal ``\\n``, ``\\t`` or ``\\r`` (text escaped in JSON) without that
    letter: ``\\npassword=`` is ``password=`` on a new line."""
    return key[1:] if len(key) > 1 and key[0] in "ntr" else key


_FLAG_RE = re.compile(r"--?[A-Za-z][\w\-]{0,63}")


def flag_values(items: list[Any], allow: frozenset[str]) -> None:
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


SCHEME_ONLY = re.compile(r"(?i:bearer|basic|token|digest)")
