"""Redacting values: span names and attributes (the session writer's hot path), nested JSON-like
values (secret-looking keys replace what they hold whole), and bounded previews."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_agent_trace import message_text
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import internal_error

from .credentials import flag_values
from .markers import MARKER_SUB, cut_at, is_marker, marker
from .names import key_verdict, remember
from .text import TextRedactor

_SCALARS = frozenset({int, float, bool})


class Redactor(TextRedactor):
    """Removes secrets from strings and nested JSON-like values; never raises, idempotent.

    ``env=None`` follows ``os.environ`` as it changes; a mapping fixes the environment.
    """

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
        remember(self._misses, key, misses + 1, 4096)
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
            remember(self._pairs, pair, hit, 8192)
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
                secret, numeric = key_verdict(key)
                state = (2 if numeric else 1) if secret else 0
        remember(self._key_states, key, state, 4096)
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
        """``text`` cut by :func:`cut_at` (``unread`` more characters left out), with the line of the
        cut redacted again: a cut is a new context for the rules near it (all within a line).

        When the prefilter found nothing in the text before it was cut (``clean``), a piece of it
        holds no token's needle, no key word before a separator, no flag with its value, no user
        info, no Bearer: cutting cannot make a rule match, but for the home prefix, which may now
        end the line (``/rootfs`` cut to ``/root``)."""
        cut, suffix = cut_at(text, limit, unread)
        i = text.rfind("\n", 0, cut) + 1
        tail = text[i:cut] + suffix
        return text[:i] + (self._home_prefix(tail) if clean else self._fresh_text(tail))

    def _pair(self, key: Any, item: Any) -> tuple[Any, Any]:
        """One ``key: item`` of a dict, as :meth:`_value` redacts it inside the dict."""
        if isinstance(key, str):
            key = self._text(key)  # judged as written, so a second pass judges the same
            secret, numeric = key_verdict(MARKER_SUB.sub(" ", key) if "<redacted:" in key else key)
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
                    secret, numeric = key_verdict(MARKER_SUB.sub(" ", key) if "<redacted:" in key else key)
                    if secret:
                        out[key] = self._under_secret_key(key, item, numeric, depth)
                        continue
                out[key] = self._value(item, depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            out_list = [self._value(item, depth + 1) for item in value]
            flag_values(out_list, self._allow)
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
