"""``agent_trace_dspy``: for DSPy, an ``invoke_agent {name}`` span per top-level module call
(``module(...)`` / ``await module.acall(...)``: a ``dspy.ReAct``, ``Predict``, ``ChainOfThought``
or a program of the user's), current for the call, so its model calls and its tools' calls are
under it; and an ``execute_tool {name}`` span per ``dspy.Tool`` call (``ReAct``'s tool calls).
DSPy emits no OpenTelemetry spans of its own. Model calls are recorded underneath by the client
DSPy calls: LiteLLM (``engine="litellm"``, and every DSPy before 3.4) → ``agent_trace_litellm``.
DSPy 3.4's native engine (``engine="auto"`` picks it for the providers it knows) talks HTTP
through its own socket transport (vendored lm15), which no model instrumentation of ours sees:
its calls are recorded here, at the engine (``native``): a ``chat {model}`` span per call, like
LiteLLM's; ``agent_trace_http`` keeps that transport's exchanges for model replay."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches

_MODULE = "dspy.primitives.module"
_TOOL = "dspy.adapters.types.tool"
_NATIVE = "dspy.clients.engines.lm15_engine"  # DSPy 3.4's native engine (none before)


class DSPyInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "dspy"
    _patches = Patches("agent_trace_dspy")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from . import native, wrappers

        tracer = self._patches.tracer
        self._patches.wrap(_MODULE, "Module.__call__", wrappers.module_wrapper(tracer))
        self._patches.wrap(_MODULE, "Module.acall", wrappers.async_module_wrapper(tracer))
        self._patches.wrap(_TOOL, "Tool.__call__", wrappers.tool_wrapper(tracer))
        self._patches.wrap(_TOOL, "Tool.acall", wrappers.async_tool_wrapper(tracer))
        self._patches.wrap(_NATIVE, "LM15Engine.complete", native.complete_wrapper(tracer))
        self._patches.wrap(_NATIVE, "LM15Engine.stream", native.stream_wrapper(tracer))
        self._patches.wrap(_NATIVE, "AsyncLM15Engine.complete", native.async_complete_wrapper(tracer))
        self._patches.wrap(_NATIVE, "AsyncLM15Engine.stream", native.async_stream_wrapper(tracer))


__all__ = ["DSPyInstrumentor"]
