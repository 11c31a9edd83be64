"""The process-wide redactor: built on first use from the environment, the settings and what
the API added."""

from __future__ import annotations

import re
import threading
from typing import Any

from .values import Redactor

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
