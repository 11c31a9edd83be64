"""Our own format (``otel-agent-trace/session``): entries are checked, not changed, so a field
with a wrong type is an error naming file and line here rather than a traceback later. The checks
are the format's own (:mod:`otel_agent_trace.session_format.checks`), as every reader applies them."""

from __future__ import annotations

from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.session_format.checks import check_entry, check_version

NAME = "otel-agent-trace"
END_TYPES = frozenset({fmt.SESSION_END})
SNAPSHOT_TYPES = frozenset({fmt.SNAPSHOT})


def matches(raw: dict[str, Any]) -> bool:
    return "type" in raw and "id" in raw


class Normalizer:
    """Checks one file's entries (they are returned as they are)."""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        return check_entry(raw)


__all__ = ["END_TYPES", "NAME", "SNAPSHOT_TYPES", "Normalizer", "check_version", "matches"]
