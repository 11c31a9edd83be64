"""The patches and on/off switch of ``agent_trace_context`` (threads and child processes)."""

from __future__ import annotations

from otel_agent_trace.instrumentation._patching import Patches

PATCHES = Patches("agent_trace_context")
