"""Text for a terminal from values read out of a file someone else may have written (shared by
the offline renderers and the CLI).

Every value a command prints comes through :func:`clean`: control characters and escape sequences
(OSC window titles, CSI screen clears, OSC 52 clipboard writes, …) are shown escaped, never sent
raw. :func:`fit` cuts a value to a width; :func:`width` is the terminal's, or a fixed 200 columns
when the output is not a terminal. :func:`json_line` is an entry as one line of JSON with the same
guarantee; :func:`json_document` a command's whole ``--json`` answer.
"""

from __future__ import annotations

import re
import shutil
import sys
from typing import Any

import orjson

PIPE_WIDTH = 200

# C0 controls except nothing (newline and tab are escaped too: one value, one line), DEL, C1
# controls, and the Unicode bidi overrides that can reorder what a terminal shows.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What JSON leaves raw that a terminal still acts on: DEL, C1 controls, bidi overrides.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def clean(value: Any) -> str:
    """``value`` as one line of printable text: control characters escaped (``\\x1b``, ``\\n``)."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape, text)


def fit(value: Any, limit: int | None) -> str:
    """:func:`clean`, then cut to ``limit`` characters with an ellipsis (``None``: no limit)."""
    text = clean(value)
    if limit is None or len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def width(stream: Any = None) -> int:
    """Columns to fill: the terminal's when ``stream`` is one, else :data:`PIPE_WIDTH`."""
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    except (AttributeError, ValueError, OSError):
        pass
    return PIPE_WIDTH


def json_line(value: Any) -> str:
    """``value`` as one line of JSON (ending in a newline) with no raw control character: JSON
    escapes C0 controls itself; DEL, C1 controls and bidi overrides are written as ``\\uXXXX``."""
    text = orjson.dumps(value, default=str).decode()
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def json_document(value: Any) -> str:
    """``value`` as one indented JSON document (ending in a newline), escaped as :func:`json_line`
    escapes: what a command prints with ``--json``."""
    text = orjson.dumps(value, default=str, option=orjson.OPT_INDENT_2).decode()
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def duration(seconds: float | None) -> str:
    """A duration for people: ``0.17ms``, ``30.7ms``, ``1.24s``, ``3m05s``."""
    if seconds is None:
        return ""
    if seconds < 0.001:
        return f"{seconds * 1e3:.2f}ms"
    if seconds < 1:
        return f"{seconds * 1e3:.1f}ms"
    if seconds < 60:
        return f"{seconds:.2f}s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
