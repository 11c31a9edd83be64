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
_TESTS = Path(__file__).resolve().parent
# Modules whose tests take 5 s or more each on the 2-core CI machine (`--durations=25`): marked
# ``slow``, so that ``python -m pytest -m "not slow"`` is a quick run. Every test under tests/e2e
# is marked ``e2e`` (pyproject.toml names the markers).
_SLOW = frozenset(
    {
        "e2e/test_forwarding.py",
        "e2e/test_signals.py",
        "e2e/test_zip_ahead.py",
        "privacy/test_message_text.py",
        "privacy/test_redaction_corpus.py",
        "privacy/test_redaction_prefilter.py",
        "privacy/test_redaction_properties.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            where = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:  # (a test outside tests/)
            continue
        if where.startswith("e2e/"):
            item.add_marker(pytest.mark.e2e)
        if where in _SLOW:
            item.add_marker(pytest.mark.slow)


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
