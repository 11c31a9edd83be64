"""Patching and tracer providers of our instrumentors, with real peer wrappers (``wrapt``, as
other vendors' instrumentations patch) over real SDK methods and stdlib hooks."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import wrapt
from opentelemetry.instrumentation.utils import unwrap

from tests.fakes.llm_server import FakeLLMServer


class Peer:
    """Another package's instrumentation of one method: a ``wrapt`` wrapper that counts calls."""

    def __init__(self, module: Any, path: str):
        self.module = module
        self.path = path
        self.calls = 0

    def wrapper(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        self.calls += 1
        return wrapped(*args, **kwargs)

    def on(self) -> Peer:
        wrapt.wrap_function_wrapper(self.module, self.path, self.wrapper)
        return self

    def off(self) -> None:
        """Removed the way contrib instrumentations remove theirs (``unwrap``)."""
        *parents, name = self.path.split(".")
        owner = importlib.import_module(self.module) if isinstance(self.module, str) else self.module
        for part in parents:
            owner = getattr(owner, part)
        unwrap(owner, name)


def off_while(instrumentor: Any) -> Iterator[Any]:
    """Yield ``instrumentor`` uninstrumented, and leave it as it was found."""
    was_on = instrumentor.is_instrumented_by_opentelemetry
    if was_on:
        instrumentor.uninstrument()
    yield instrumentor
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()
    if was_on:
        instrumentor.instrument()


@pytest.fixture
def openai_instrumentor(provider: Any) -> Iterator[Any]:
    from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor

    yield from off_while(OpenAIInstrumentor())


@pytest.fixture
def anthropic_instrumentor(provider: Any) -> Iterator[Any]:
    from otel_agent_trace.instrumentation.anthropic import AnthropicInstrumentor

    yield from off_while(AnthropicInstrumentor())


@pytest.fixture
def processes_instrumentor(provider: Any) -> Iterator[Any]:
    from otel_agent_trace.instrumentation.system.processes import ProcessesInstrumentor

    yield from off_while(ProcessesInstrumentor())


@pytest.fixture
def files_instrumentor(provider: Any) -> Iterator[Any]:
    from otel_agent_trace.instrumentation.system.files import FilesInstrumentor

    yield from off_while(FilesInstrumentor())


@pytest.fixture(scope="package")
def llm() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def openai_client(llm: FakeLLMServer) -> Any:
    import openai

    llm.reset()
    # Retries as the SDK does by default: a connection the busy local server dropped is not a failure
    # of what these tests check (which spans, from which provider).
    return openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=2)


@pytest.fixture
def anthropic_client(llm: FakeLLMServer) -> Any:
    import anthropic

    llm.reset()
    return anthropic.Anthropic(base_url=llm.anthropic_url, api_key="sk-ant-test", max_retries=2)
