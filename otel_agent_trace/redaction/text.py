"""Text redaction: the rules applied to one string, each only on text that holds what it needs,
repeated until nothing changes; the environment's secrets, user patterns and the allow list."""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections.abc import Iterable, Mapping
from operator import is_
from typing import Any

from otel_agent_trace._internal.guard import report_once

from .credentials import (
    ESCAPED_LITERAL,
    OPENSSH_NAME,
    SCHEME_ONLY,
    SPACED_KEY_RUN,
    holds_secret,
    reads_as_words,
    secret_key_at,
    unescaped,
    userinfo_secret,
)
from .markers import MARKER_RE, is_marker, marker
from .names import MIN_SECRET_VALUE, is_secret_key, is_secret_name, remember
from .patterns import (
    BEARER_RE,
    HOME_TAIL,
    KEY_NEEDLES,
    KEYED_RE,
    TOKEN_NEEDLE_PASS,
    TOKEN_PASSES,
    TOKEN_PATTERNS,
    USERINFO_RE,
)
from .prefilter import compile_prefilter


class TextRedactor:
    """Removes secrets from text: its configuration (environment secrets, followed as they
    change; user patterns; the allow list; the home directory) and every text rule.

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
            compiled = re.compile(r"(?P<oat_marker>" + MARKER_RE + r")|(?:" + source + ")", flags)
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
            marker_part = r"(?P<marker>" + MARKER_RE + ")"
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
                re.compile(home + r"(?:(?<=file://" + home + r")|(?<![\w.~/\-]" + home + "))" + HOME_TAIL)
                if self._home
                else None
            )
            self._prefilter = compile_prefilter(self._env_values) if self._use_prefilter else None
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

    # --- text ----------------------------------------------------------------------------------

    def _key_marker(self, key: str) -> str:
        """``<redacted:key:NAME>``, or ``<redacted:key>`` when the name itself holds a secret."""
        found = self._key_markers.get(key)
        if found is None:
            hidden = not key or "<" in key or self._hidden_re.search(key) is not None
            found = marker("key") if hidden else marker("key:" + key)
            remember(self._key_markers, key, found, 4096)
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
            remember(cache, text, out, 8192)
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
        if clean:  # no rule would change it (see PREFILTER_STATIC), but the home prefix
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
        passes = {i for needle, i in TOKEN_NEEDLE_PASS if has(needle)}
        for i in sorted(passes):  # in their order: sk-ant- before sk-
            kind, _, pattern = TOKEN_PASSES[i]
            text = pattern.sub(lambda m, kind=kind: self._token(m, kind), text)
        if "://" in text and "@" in text:
            text = USERINFO_RE.sub(replace, text)
        low = text.lower()
        if "bearer" in low:
            text = BEARER_RE.sub(replace, text)
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
            return KEYED_RE.sub(self._replace, text)
        starts: set[int] = set()
        words: list[int] = []  # where each key word is (for _keyed_line)
        for word in KEY_NEEDLES:
            i = low.find(word)
            while i != -1:
                words.append(i)
                line = text.rfind("\n", 0, i) + 1
                if line not in starts and secret_key_at(text, i, len(word)):
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
        """``KEYED_RE.sub(self._replace, line)``, with the regex searched only from near key words.

        Python's ``re`` tries every alternative at every position (≈ 14 µs for a 100-character
        URL). But a key rule's match holds a key word (its ``_KEY_HINT``) after at most 64 key
        characters (word characters, ``.``, ``-``, space) and 4 quotes, backslashes or dashes
        from its start, and a marker starts with ``<redacted:``. So a match that starts at or
        after ``pos`` starts no earlier than the earliest such window of a word at or after
        ``pos``, and searching from there finds the match ``sub`` would. In an ASCII line ``low``
        finds every key word the case-insensitive regex does; other lines (the regex also folds
        ``ſ``, ``K``, ``ı``) take the plain ``sub``."""
        if not line.isascii():
            return KEYED_RE.sub(self._replace, line)
        if words is None:  # where each key word is
            words = []
            for word in KEY_NEEDLES:
                i = low.find(word)
                while i != -1:
                    words.append(i)
                    i = low.find(word, i + 1)
        windows: list[tuple[int, int]] = []  # (key word position, earliest start of a match)
        for i in words:
            run = SPACED_KEY_RUN.match(line[max(0, i - 64) : i][::-1]).end()  # type: ignore[union-attr]
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
        search = KEYED_RE.search
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
        if found in self._allow or (kind == "openai_key" and OPENSSH_NAME.fullmatch(found)):
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
            if token in self._allow or reads_as_words(token):
                return found
            if token[-1] == "=" and m.string[m.end() : m.end() + 1] == '"' and reads_as_words(token[:-1]):
                return found  # a challenge's parameter: WWW-Authenticate: Bearer resource_metadata="…"
            return m.group("bearer_p") + marker("bearer")
        if group == "userinfo":
            return (
                found
                if found[:-1] in self._allow or not userinfo_secret(found[:-1])
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
            name = unescaped(name)  # "…\\npassword = \\"…\\"" in JSON: the key is password
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
            escaped = ESCAPED_LITERAL.fullmatch(value)
            if escaped is not None:
                lead, inner, trail = escaped.groups()
        if secret and inner and not is_marker(inner) and inner not in self._allow:
            if SCHEME_ONLY.fullmatch(inner):  # "Authorization: Bearer" alone: nothing to hide
                return found
            if not holds_secret(m, key_group, name, inner, lead[-1:] or m.group(0)[start - 1 : start]):
                return found[:start] + self._text(value) + found[end:]  # code, not a secret
            return found[:start] + lead + self._key_marker(name) + trail + found[end:]
        return found[:start] + self._text(value) + found[end:]
