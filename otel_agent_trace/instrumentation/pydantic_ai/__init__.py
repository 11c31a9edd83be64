"""``agent_trace_pydantic_ai``: for Pydantic AI, an ``invoke_agent {name}`` span per run
(``run``, ``run_sync``, ``run_stream``, ``iter``, …) with the run's model and tool calls under it,
and an ``execute_tool`` span per tool call with the model's call id, the arguments and the result.

Every run goes through ``Agent.iter``; we add one capability of our own to the run's
``capabilities`` (Pydantic AI's own extension point: ``wrap_run``, ``wrap_tool_execute``), so our
spans sit where the framework runs its hooks. When Pydantic AI's own instrumentation is on
(``Agent.instrument_all()``, ``instrument=``, Logfire), its spans are enriched, not doubled
(see :mod:`.capability`). Model calls are those of the ``openai`` (or ``anthropic``) client
underneath, recorded by their own instrumentation."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class PydanticAIInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    library_module = "pydantic_ai"
    _patches = Patches("agent_trace_pydantic_ai")

    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from .capability import iter_wrapper

        self._patches.wrap("pydantic_ai.agent", "Agent.iter", iter_wrapper(self._patches.tracer))


__all__ = ["PydanticAIInstrumentor"]
