"""Placeholder while it is being built."""

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from .package import _instruments


class OpenAIAgentsInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        pass

    def _uninstrument(self, **kwargs: Any) -> None:
        pass
