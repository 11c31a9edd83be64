"""Type checks shared by the format modules (defined with the format, in
:mod:`otel_agent_trace.session_format.checks`): a wrong type is a :class:`BadEntry` naming the field."""

from __future__ import annotations

from otel_agent_trace.session_format.checks import BadEntry, flatten, integer, mapping, number, strings, text

__all__ = ["BadEntry", "flatten", "integer", "mapping", "number", "strings", "text"]
