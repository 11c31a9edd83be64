"""Comparing a re-run tool's result with the recorded one.

The checkpoint tier holds results exactly: equal JSON or a mismatch. The trace tier holds
redacted previews: a redaction marker (``<redacted:…>``) stands for any text, a cut preview
(``…[+N chars]``) for any rest, and the home directory may be written ``~``; none of those is a
difference.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt

from ..jsonvalue import JSONValue

MARKER = re.compile(r"<redacted:[^<>\s]{1,120}>")
CUT = re.compile(r"…\[\+\d+ chars\]$")


def as_json(value: Any) -> Any:
    """``value`` as the JSON the recorder would have written for it (tuples become lists, …)."""
    return orjson.loads(fmt.dumps_canonical(value))


def _text_forms(value: Any) -> list[str]:
    text = value if isinstance(value, str) else fmt.dumps_canonical(value).decode("utf-8", "replace")
    forms = [text]
    home = str(Path.home())
    if home not in ("", "/") and home in text:
        forms.append(text.replace(home, "~"))
    return forms


def _pattern(preview: str) -> re.Pattern[str]:
    cut = CUT.search(preview)
    body = preview[: cut.start()] if cut else preview
    parts: list[str] = []
    pos = 0
    for m in MARKER.finditer(body):
        parts.append(re.escape(body[pos : m.start()]))
        parts.append(".*?")
        pos = m.end()
    parts.append(re.escape(body[pos:]))
    return re.compile("".join(parts) + (".*" if cut else ""), re.DOTALL)


def preview_matches(recorded: JSONValue, new: JSONValue) -> bool:
    """Whether ``new`` (JSON values) is what the trace-tier preview ``recorded`` shows."""
    if isinstance(recorded, str):
        if not MARKER.search(recorded) and not CUT.search(recorded) and "~" not in recorded:
            return (
                isinstance(new, str)
                and new == recorded
                or (not isinstance(new, str) and _text_forms(new)[0] == recorded)
            )
        pattern = _pattern(recorded)
        return any(pattern.fullmatch(form) for form in _text_forms(new))
    if isinstance(recorded, dict):
        return (
            isinstance(new, dict)
            and set(recorded) == set(new)
            and all(preview_matches(v, new[k]) for k, v in recorded.items())
        )
    if isinstance(recorded, list):
        return (
            isinstance(new, list)
            and len(recorded) == len(new)
            and all(preview_matches(a, b) for a, b in zip(recorded, new, strict=True))
        )
    return recorded == new


def results_match(recorded: Any, new: Any, *, exact: bool) -> bool:
    """Compare a new result with the recorded one (``exact``: the checkpoint tier)."""
    new = as_json(new)
    if exact:
        return as_json(recorded) == new
    return preview_matches(recorded, new)


def inexact_reason(arguments: JSONValue) -> str | None:
    """Why trace-tier arguments are not the exact ones (``None`` when they are)."""
    if not isinstance(arguments, dict):
        return "the arguments were cut to a text preview"
    stack: list[JSONValue] = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
            if any(MARKER.search(k) for k in value):  # (JSON: every key a string)
                return "an argument name was redacted"
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            if MARKER.search(value):
                return "an argument was redacted"
            if CUT.search(value):
                return "an argument was cut to a preview"
            if value == "~" or value.startswith("~/"):
                return "an argument holds a path under the home directory, which the trace tier writes as ~"
    return None
