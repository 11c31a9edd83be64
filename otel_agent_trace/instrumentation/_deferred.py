"""Instrument a library when the agent first imports it, not at start-up.

``opentelemetry-instrument`` calls every installed instrumentor at start-up. Importing openai,
anthropic, strands, langchain, mcp and the Agents SDK there costs seconds (measured: 5.3 s
against 0.36 s for a bare ``python -c pass``), paid by every run and every child Python process,
whether it uses them or not. A :class:`DeferredInstrumentor` patches at once when its library is
already imported, and otherwise from a post-import hook (``wrapt.register_post_import_hook``)
the moment the agent imports it.
"""

from __future__ import annotations

import sys
from typing import Any

import wrapt
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from otel_agent_trace._internal.guard import internal_error, report_once
from otel_agent_trace.instrumentation._patching import Patches


class DeferredInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """A ``BaseInstrumentor`` whose patching waits for ``library_module`` to be imported.

    Subclasses set ``library_module`` and ``_patches`` (their :class:`Patches`: switch, tracer,
    wrappers) and implement ``_instrument_now``; ``uninstrument()`` switches them off and removes
    every wrapper made through ``_patches`` (``_uninstrument_now`` undoes anything else).
    """

    library_module: str = ""
    _patches: Patches
    _wanted = False
    _applied = False
    _hooked = False
    _kwargs: dict[str, Any] = {}

    def _instrument(self, **kwargs: Any) -> None:
        cls = type(self)
        cls._wanted = True
        cls._kwargs = kwargs
        self._patches.start(kwargs.get("tracer_provider"))
        if not self.library_module or self.library_module in sys.modules:
            self._apply()
        elif not cls._hooked:
            cls._hooked = True  # a post-import hook cannot be removed: it checks _wanted instead
            wrapt.register_post_import_hook(self._on_import, self.library_module)

    def _on_import(self, module: Any) -> None:
        if type(self)._wanted:
            self._apply()

    def _apply(self) -> None:
        cls = type(self)
        if cls._applied:
            return
        if self._outside_supported_range():
            return
        try:
            self._instrument_now(**cls._kwargs)
            cls._applied = True
        except Exception as exc:  # never break the agent's import of its own library
            internal_error("instrumenting a library on import", exc)

    def _outside_supported_range(self) -> bool:
        """Checked when the library is imported (at start-up it would cost every process a metadata
        read per library): a version outside ``instrumentation_dependencies()`` is left alone, with
        one warning, rather than patched blindly."""
        from opentelemetry.instrumentation.dependencies import get_dependency_conflicts

        try:
            conflict = get_dependency_conflicts(self.instrumentation_dependencies())
        except Exception as exc:
            internal_error("checking a library's version", exc)
            return False
        if conflict is None:
            return False
        report_once(f"unsupported:{type(self).__name__}", "otel-agent-trace: %s", conflict)
        return True

    def _uninstrument(self, **kwargs: Any) -> None:
        cls = type(self)
        cls._wanted = False
        if cls._applied:
            cls._applied = False
            self._uninstrument_now(**kwargs)
        self._patches.stop()

    def _instrument_now(self, **kwargs: Any) -> None:
        raise NotImplementedError

    def _uninstrument_now(self, **kwargs: Any) -> None:
        """Undo what is not a wrapper made through ``_patches`` (nothing, by default)."""
