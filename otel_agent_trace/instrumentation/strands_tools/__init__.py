"""``agent_trace_strands_tools``: Strands Agents' own ``execute_tool`` spans, completed with the
arguments and result (session content), the tool type and the import path of the tool."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


def _targets() -> list[tuple[Any, str, Any]]:
    try:
        from strands.telemetry.tracer import Tracer
    except ImportError:
        return []
    from .wrappers import (
        end_tool_call_span_wrapper,
        run_tool_wrapper,
        start_tool_call_span_wrapper,
        start_tool_telemetry_wrapper,
    )

    patches: list[tuple[Any, str, Any]] = [
        (Tracer, "start_tool_call_span", start_tool_call_span_wrapper),
        (Tracer, "end_tool_call_span", end_tool_call_span_wrapper),
    ]
    try:  # private, for the tool object (import path); optional
        from strands.tools.executors import _executor

        if hasattr(_executor, "_start_tool_telemetry"):
            patches.append((_executor, "_start_tool_telemetry", start_tool_telemetry_wrapper))
        if hasattr(_executor, "_run_tool"):  # model replay answering tools from the recording
            patches.append((_executor, "_run_tool", run_tool_wrapper))
    except ImportError:
        pass
    return patches


class StrandsToolsInstrumentor(DeferredInstrumentor):
    library_module = "strands"
    _patches = Patches("agent_trace_strands_tools")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        for owner, name, wrapper in _targets():
            self._patches.wrap(owner, name, wrapper)


__all__ = ["StrandsToolsInstrumentor"]
