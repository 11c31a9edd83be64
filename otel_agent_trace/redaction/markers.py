"""The marker that replaces a secret (``<redacted:KIND>``), so a replay can tell a redaction from
a real difference, and where a text may be cut without cutting a marker in half."""

from __future__ import annotations

import re
from typing import Any

MARKER_RE = r"<redacted:[^<>\s]{1,120}>"
_MARKER_KIND_RE = re.compile(r"[^A-Za-z0-9_.:\-]")
MARKER_SUB = re.compile(MARKER_RE)


def marker(kind: str) -> str:
    """``<redacted:KIND>`` (the kind made safe to read back)."""
    return f"<redacted:{_MARKER_KIND_RE.sub('_', kind)[:100] or 'secret'}>"


def is_marker(text: Any) -> bool:
    return isinstance(text, str) and text.startswith("<redacted:") and text.endswith(">")


def cut_at(text: str, limit: int, unread: int = 0) -> tuple[int, str]:
    """Where to cut ``text`` to about ``limit`` characters (not inside a marker), and what to add
    to say what was left out (``unread`` more characters were never in ``text``)."""
    cut = min(limit, len(text))
    opened = text.rfind("<", max(0, cut - 130), cut)
    if opened != -1:
        whole = MARKER_SUB.match(text, opened)
        if whole is not None and whole.end() > cut:
            cut = whole.end()
    rest = len(text) - cut + unread
    return cut, (f"…[+{rest} chars]" if rest > 0 else "")


# --- the process-wide redactor -------------------------------------------------------------
