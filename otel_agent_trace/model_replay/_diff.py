"""How a request made now differs from the recorded one: method, path, and the body compared as
JSON (model, messages, tools, parameters), each difference named by its JSON path. Headers are
not compared (user agents, retry counts, idempotency keys and credentials change run to run).

**Volatile values.** An agent's prompt often holds values that change from run to run by nature:
the clock, its process id, a random id, a temporary directory, its own log lines. Where two texts
differ only in such values they are the same request, and what differed is said as *volatile*
(not a divergence). The rule, for two strings at the same JSON path that differ:

1. Log lines are set aside on both sides: a line that starts with a date and time (or a time),
   optionally in brackets, and holds a log level word (``DEBUG`` … ``CRITICAL``), as Python's
   ``logging`` and most loggers write them.
2. Each text is cut into literal text and volatile values (:data:`_VOLATILE`): ISO 8601 / RFC 3339
   dates and date-times, RFC 2822 and ``ctime()`` date-times, dates written out
   (``Monday, June 2, 2025``), clock times (``10:04:05``, ``10:04 AM``), epoch times in seconds,
   milliseconds, microseconds or nanoseconds, UUIDs, hex ids of 12+ digits (digits and letters
   both), paths under a temporary directory (``/tmp/…``, ``/var/tmp/…``, macOS' ``/var/folders/…``,
   the process's ``tempfile.gettempdir()``), and numbers labelled ``pid``.
3. The two sequences must be the same but for the values: the same literal text, in the same
   order, between values of the same kind. So the values are aligned by the text around them, and
   an edit anywhere in the literal text — next to a timestamp too — is a real difference.
4. A clock value must have moved forward with the clock: not before the recorded value (a minute
   of slack), not after now (a minute; 14 hours for a date-time without a zone, a day for a
   date). A date or epoch moved backwards, or into the future, is a real difference.
"""

from __future__ import annotations

import difflib
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

_MAX_DIFFERENCES = 20
_MAX_TEXT_LINES = 40
_MAX_VOLATILE_SHOWN = 10  # values named per string (all are counted)

_SLACK = 60.0  # seconds a clock value may be before the recorded one, or after now
_NAIVE_SLACK = 14 * 3600.0  # a date-time without a zone may be local or UTC
_DAY = 86400.0

_LEVELS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)"
_TIME = r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_ISO = (
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
    r"(?: ?(?:Z|UTC|[+-]\d{2}:?\d{2}))?)?"
)
_LOG_LINE = re.compile(rf"^[ \t]*\[?(?:{_ISO}|{_TIME})\]?[^\n]*\b{_LEVELS}\b[^\n]*(?:\n|$)", re.M)
_DAYS = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_LONG_DAYS = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_LONG_MONTHS = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_TMP_ROOTS = sorted(
    {"/tmp", "/var/tmp", "/var/folders", "/private/var/folders", tempfile.gettempdir().rstrip("/")},
    key=len,
    reverse=True,
)
# The kinds of volatile value, tried in this order at each place (the first that matches wins).
_VOLATILE = re.compile(
    "|".join(
        [
            r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)",
            rf"(?P<rfc2822>\b{_DAYS}, \d{{1,2}} {_MONTHS} \d{{4}} {_TIME}(?: (?:GMT|UTC|[+-]\d{{4}}))?)",
            rf"(?P<ctime>\b{_DAYS} {_MONTHS} [ \d]\d {_TIME} \d{{4}}\b)",
            rf"(?P<iso>(?<![\d.])\b{_ISO}(?![\d:]))",
            r"(?P<slashdate>\b\d{4}/\d{2}/\d{2}\b)",
            rf"(?P<longdate>\b(?:{_LONG_DAYS},? )?{_LONG_MONTHS} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b)",
            rf"(?P<clock>\b{_TIME}\b|\b\d{{1,2}}:\d{{2}}(?::\d{{2}})? ?(?:AM|PM|am|pm)\b)",
            r"(?P<epoch>(?<![\w.])1\d{9}(?:\.\d{1,9})?(?![\w.])|(?<![\w.])1\d{12}(?:\d{3}|\d{6})?(?![\w.]))",
            r"(?P<hexid>\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b"
            r"|\b(?=[0-9A-F]*\d)(?=[0-9A-F]*[A-F])[0-9A-F]{12,}\b)",
            "(?P<tmppath>(?<![\\w/.])(?:"
            + "|".join(re.escape(root) for root in _TMP_ROOTS)
            + ")/[^\\s'\"`<>|,;()\\[\\]{}]*)",
            r"(?i:\bpid\b[ \t:=#]{0,3})(?P<pid>\d+)\b",
        ]
    )
)
_KINDS = {
    "uuid": "uuid",
    "rfc2822": "time",
    "ctime": "time",
    "iso": "time",
    "slashdate": "date",
    "longdate": "date",
    "clock": "time",
    "epoch": "time",
    "hexid": "id",
    "tmppath": "temporary path",
    "pid": "pid",
}


@dataclass
class Comparison:
    """What differs (``differences``: a divergence) and what differs only in volatile values
    (``volatile``: one note per string, ``volatile_values``: how many values)."""

    differences: list[str] = field(default_factory=list)
    volatile: list[str] = field(default_factory=list)
    volatile_values: int = 0


def _json(body: bytes | None) -> Any:
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def compare(
    method: str,
    path: str,
    body: bytes | None,
    rec_method: str,
    rec_path: str,
    rec_body: bytes | None,
    *,
    now: float | None = None,
) -> Comparison:
    """The request made now against the recorded one (``now``: the clock, seconds since the
    epoch, for the volatile rule; default the current time)."""
    out = Comparison()
    if method.upper() != rec_method.upper():
        out.differences.append(f"method: recorded {rec_method}, now {method}")
    if path != rec_path:
        out.differences.append(f"path: recorded {rec_path}, now {path}")
    if body == rec_body:
        return out
    _walk(_json(rec_body), _json(body), "body", out, time.time() if now is None else now)
    return out


def differences(
    method: str, path: str, body: bytes | None, rec_method: str, rec_path: str, rec_body: bytes | None
) -> list[str]:
    """One line per difference (at most a few dozen); ``[]`` when the requests are the same
    (volatile values aside)."""
    return compare(method, path, body, rec_method, rec_path, rec_body).differences


def _walk(old: Any, new: Any, where: str, out: Comparison, now: float) -> None:
    if len(out.differences) >= _MAX_DIFFERENCES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            sub = f"{where}.{key}"
            if key not in new:
                out.differences.append(f"{sub}: recorded {_short(old[key])}, now absent")
            elif key not in old:
                out.differences.append(f"{sub}: absent in the recording, now {_short(new[key])}")
            else:
                _walk(old[key], new[key], sub, out, now)
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            sub = f"{where}[{i}]"
            if i >= len(new):
                out.differences.append(f"{sub}: recorded {_short(old[i])}, now absent")
            elif i >= len(old):
                out.differences.append(f"{sub}: absent in the recording, now {_short(new[i])}")
            else:
                _walk(old[i], new[i], sub, out, now)
        return
    if old == new and type(old) is type(new):
        return
    if isinstance(old, str) and isinstance(new, str):
        found = volatile_only(old, new, now)
        if found is not None:
            shown = found[:_MAX_VOLATILE_SHOWN]
            more = f", … {len(found) - len(shown)} more" if len(found) > len(shown) else ""
            out.volatile.append(f"{where}: " + ", ".join(shown) + more)
            out.volatile_values += len(found)
            return
        if "\n" in old or "\n" in new or len(old) > 80:
            lines = list(
                difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "now", lineterm="", n=1)
            )[:_MAX_TEXT_LINES]
            out.differences.append(f"{where}:\n    " + "\n    ".join(lines))
            return
    out.differences.append(f"{where}: recorded {_short(old)}, now {_short(new)}")


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"…[+{len(text) - limit} chars]"


# --- volatile values ---------------------------------------------------------------------------


def volatile_only(old: str, new: str, now: float | None = None) -> list[str] | None:
    """When ``old`` and ``new`` differ only in volatile values (see the module's rule), one note
    per value that differs (``"time 10:04:05 → 10:04:06"``, ``"log lines (3 → 5)"``); else
    ``None`` (a real difference)."""
    now = time.time() if now is None else now
    old, new = _differing_lines(old, new)
    notes: list[str] = []
    old_logs, new_logs = _LOG_LINE.findall(old), _LOG_LINE.findall(new)
    if old_logs or new_logs:
        old, new = _LOG_LINE.sub("", old), _LOG_LINE.sub("", new)
        if old_logs != new_logs:
            notes.append(f"log lines ({len(old_logs)} → {len(new_logs)} where the texts differ)")
    old_parts, new_parts = _parts(old), _parts(new)
    if len(old_parts) != len(new_parts):
        return None
    for (old_kind, old_text), (new_kind, new_text) in zip(old_parts, new_parts, strict=True):
        if old_kind != new_kind:
            return None
        if old_text == new_text:
            continue
        if old_kind is None or not _moved_with_the_clock(old_kind, old_text, new_text, now):
            return None
        notes.append(f"{_KINDS[old_kind]} {_short(old_text, 60)[1:-1]} → {_short(new_text, 60)[1:-1]}")
    return notes or None


def _differing_lines(old: str, new: str) -> tuple[str, str]:
    """The lines of ``old`` and ``new`` from the first that differs to the last that differs
    (what is the same before and after is the same text: no value of ours spans lines). A long
    prompt with a clock line near its top is read once in C, not cut into values whole."""
    size = min(len(old), len(new))
    lo, hi = 0, size  # the common prefix: binary search with slice comparisons (memcmp)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = old.rfind("\n", 0, lo) + 1
    lo, hi = 0, size - start  # the common suffix, not overlapping the prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    cut = old.find("\n", len(old) - lo)
    tail = 0 if cut < 0 else len(old) - cut
    return old[start : len(old) - tail], new[start : len(new) - tail]


def _parts(text: str) -> list[tuple[str | None, str]]:
    """``text`` as literal runs (kind ``None``) and volatile values (their kind)."""
    parts: list[tuple[str | None, str]] = []
    at = 0
    for match in _VOLATILE.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue
        start, end = match.span(kind)
        if start > at:
            parts.append((None, text[at:start]))
        parts.append((kind, text[start:end]))
        at = end
    if at < len(text):
        parts.append((None, text[at:]))
    return parts


def _moved_with_the_clock(kind: str, old: str, new: str, now: float) -> bool:
    """For a clock value: ``new`` is not before ``old`` and not after ``now`` (with slack); a
    value of another kind, or one that cannot be read as an instant, may be anything."""
    try:
        if kind == "epoch":
            a, b, slack = _epoch(old), _epoch(new), _SLACK
        elif kind in ("iso", "rfc2822", "ctime", "slashdate", "longdate"):
            (a, a_naive), (b, b_naive) = _instant(kind, old), _instant(kind, new)
            if a_naive != b_naive:
                return False  # one with a zone, one without: not the same way of writing the time
            date_only = kind in ("slashdate", "longdate") or len(old) <= 10
            slack = _DAY if date_only else (_NAIVE_SLACK if a_naive else _SLACK)
            if date_only:
                return a - _DAY <= b <= now + slack
        else:
            return True
    except (ValueError, OverflowError):
        return False
    return a - _SLACK <= b <= now + slack


def _epoch(text: str) -> float:
    value = float(text)
    digits = len(text.split(".")[0])
    return value / {10: 1, 13: 1e3, 16: 1e6, 19: 1e9}[digits]


def _instant(kind: str, text: str) -> tuple[float, bool]:
    """Seconds since the epoch, and whether the text had no zone (read as UTC then)."""
    if kind == "rfc2822":
        from email.utils import parsedate_to_datetime

        when = parsedate_to_datetime(text)
    elif kind == "ctime":
        when = datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    elif kind == "slashdate":
        when = datetime.strptime(text, "%Y/%m/%d")
    elif kind == "longdate":
        cleaned = re.sub(r"(\d)(st|nd|rd|th)", r"\1", text).replace(",", "")
        words = cleaned.split()
        when = datetime.strptime(" ".join(words[-3:]), "%B %d %Y")
    else:
        iso = text.replace(",", ".").replace(" UTC", "+00:00").replace("UTC", "+00:00")
        when = datetime.fromisoformat(iso)
    naive = when.tzinfo is None
    if naive:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp(), naive


__all__ = ["Comparison", "compare", "differences", "volatile_only"]
