"""A library outside a part's declared range is left alone (one warning), inside it is patched:
checked when the library is imported, not at start-up."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.openai.package import _instruments as openai_range


def _instrumentor(requirement: str) -> DeferredInstrumentor:
    class Probe(DeferredInstrumentor):
        library_module = "json"  # imported already: applied at once
        _patches = Patches(f"probe {requirement}")
        patched = False

        def instrumentation_dependencies(self) -> Collection[str]:
            return (requirement,)

        def _instrument_now(self, **kwargs: Any) -> None:
            type(self).patched = True

    return Probe()


def test_a_library_outside_the_range_is_not_patched_and_says_why(caplog):
    probe = _instrumentor("openai < 1")  # the installed openai is newer
    with caplog.at_level(logging.WARNING, logger="otel_agent_trace"):
        probe.instrument(skip_dep_check=True)
    try:
        assert type(probe).patched is False
        assert any("openai" in r.getMessage() and "outside" in r.getMessage() for r in caplog.records)
    finally:
        probe.uninstrument()


def test_a_library_inside_the_range_is_patched():
    probe = _instrumentor(openai_range[0])  # the range the OpenAI part declares
    probe.instrument(skip_dep_check=True)
    try:
        assert type(probe).patched is True
    finally:
        probe.uninstrument()
