"""Shared fixtures: one real SDK TracerProvider for the test process (OpenTelemetry allows one
global provider), with our session processor and an in-memory exporter beside it."""

from __future__ import annotations

import os

# An internal error of ours fails the test (re-raised where it is caught), here and in every
# process the tests start; in production it is swallowed and reported once (guard.internal_error).
os.environ["AGENT_TRACE_INTERNAL_ERRORS"] = "raise"

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent_trace as oat
from otel_agent_trace.recording import SessionSpanProcessor, stop_active
from otel_agent_trace.settings import Settings

_MEMORY = InMemorySpanExporter()


@pytest.fixture(autouse=True)
def no_internal_errors() -> Iterator[None]:
    """Fail a test during which an internal error of ours was caught somewhere it could not be
    re-raised to the test (a thread, the SDK's own error handling)."""
    from otel_agent_trace._internal import guard

    del guard.internal_errors[:]
    yield
    errors = list(guard.internal_errors)
    del guard.internal_errors[:]
    assert not errors, f"internal errors of otel-agent-trace: {errors}"


@pytest.fixture(scope="session")
def provider() -> TracerProvider:
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    provider = TracerProvider()
    provider.add_span_processor(SessionSpanProcessor(Settings(), auto_session=False))
    provider._agent_trace_recording = True  # type: ignore[attr-defined]
    provider.add_span_processor(SimpleSpanProcessor(_MEMORY))
    trace.set_tracer_provider(provider)
    return provider


@pytest.fixture
def memory_exporter(provider: TracerProvider) -> Iterator[InMemorySpanExporter]:
    _MEMORY.clear()
    yield _MEMORY
    _MEMORY.clear()


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def recording(provider: TracerProvider, session_dir: Path) -> Iterator[oat.Session]:
    """A started session writing to a temporary directory (trace tier); stopped afterwards."""
    s = oat.session("test", directory=session_dir, settings=Settings(directory=session_dir)).start()
    yield s
    s.stop()
    stop_active()
