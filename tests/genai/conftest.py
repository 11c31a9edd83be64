"""Fixtures for the model and agent-framework instrumentations: the replay server, real SDK
clients pointed at it, our instrumentors switched on for this package only, and helpers to
read a session file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import otel_agent_trace as oat
from otel_agent_trace.settings import get_settings, parse_capture_content, set_settings
from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture(scope="package", autouse=True)
def instrumented(provider: Any) -> Iterator[None]:
    """Our model and framework instrumentors, on for the tests of this package."""
    from otel_agent_trace.instrumentation.anthropic import AnthropicInstrumentor
    from otel_agent_trace.instrumentation.bedrock import BedrockInstrumentor
    from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor

    instrumentors: list[Any] = [OpenAIInstrumentor(), AnthropicInstrumentor(), BedrockInstrumentor()]
    try:
        from otel_agent_trace.instrumentation.langchain import LangChainInstrumentor

        instrumentors.append(LangChainInstrumentor())
    except ImportError:
        pass
    try:
        from otel_agent_trace.instrumentation.strands import StrandsInstrumentor

        instrumentors.append(StrandsInstrumentor())
    except ImportError:
        pass
    mine = [inst for inst in instrumentors if not inst.is_instrumented_by_opentelemetry]
    for inst in mine:
        inst.instrument(tracer_provider=provider)
    yield
    for inst in mine:  # only what this package switched on
        inst.uninstrument()


@pytest.fixture(scope="package")
def _server() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm(_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The replay server, with an empty script and request log."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
def openai_client(llm: FakeLLMServer) -> Any:
    import openai

    return openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)


@pytest.fixture
def async_openai_client(llm: FakeLLMServer) -> Any:
    import openai

    return openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)


@pytest.fixture
def anthropic_client(llm: FakeLLMServer) -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=llm.anthropic_url, api_key="sk-ant-test", max_retries=0)


@pytest.fixture
def async_anthropic_client(llm: FakeLLMServer) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(base_url=llm.anthropic_url, api_key="sk-ant-test", max_retries=0)


@pytest.fixture
def bedrock_client(llm: FakeLLMServer) -> Any:
    """A real boto3 ``bedrock-runtime`` client pointed at the replay server (no retries)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        endpoint_url=llm.base_url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


@pytest.fixture
def capture(request: Any) -> Iterator[Any]:
    """``capture("SPAN_ONLY")`` sets OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT for a test."""
    before = get_settings()

    def set_mode(mode: str) -> None:
        set_settings(before.with_(capture_content=parse_capture_content(mode)))

    yield set_mode
    set_settings(before)


@pytest.fixture
def checkpoint(session_dir: Path, provider: Any) -> Iterator[oat.Session]:
    """A started session keeping both tiers (checkpoint: full messages; trace: sizes + hashes)."""
    s = oat.session("genai", directory=session_dir, tier="both").start()
    yield s
    s.stop()
