"""``opentelemetry-instrument python agent.py`` records model calls with no code change, and each
instrumentation declares the library versions it supports — checked against what is installed
(a peer that silently records nothing under openai 3.x is the cautionary tale)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest
from opentelemetry.instrumentation.dependencies import get_dependency_conflicts

from otel_agent_trace.offline.loader import load_session

AGENT = textwrap.dedent(
    """
    import os
    import openai

    client = openai.OpenAI(base_url=os.environ["FAKE_OPENAI_URL"], api_key="sk-test", max_retries=0)
    messages = [{"role": "user", "content": "Hi there"}]
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, stream=True) if c.choices)
    print(reply.choices[0].message.content, "|", text)
    """
)


def test_opentelemetry_instrument_records_openai_calls(llm, tmp_path: Path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    sessions = tmp_path / "sessions"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_", "PYTEST_"))}
    env.update(FAKE_OPENAI_URL=llm.openai_url, AGENT_TRACE_DIR=str(sessions), AGENT_TRACE_ZIP="false")
    exe = Path(sys.executable).with_name("opentelemetry-instrument")
    done = subprocess.run(
        [str(exe), sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello! How can I help you today? | Hello! How can I help you today?"
    (path,) = sessions.glob("*.jsonl")
    session = load_session(path)
    chats = [s for s in session.spans if s.name == "chat gpt-4o-mini"]
    assert len(chats) == 2
    assert chats[0].attributes["gen_ai.provider.name"] == "openai"
    assert chats[0].attributes["gen_ai.response.id"] == "chatcmpl-text001"
    assert chats[1].attributes["gen_ai.request.stream"] is True
    assert len(session.snapshots) == 2


BEDROCK_AGENT = textwrap.dedent(
    """
    import os
    import boto3

    client = boto3.client("bedrock-runtime", endpoint_url=os.environ["FAKE_URL"], region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    reply = client.converse(modelId="m1", messages=[{"role": "user", "content": [{"text": "Hi there"}]}])
    print(reply["output"]["message"]["content"][-1]["toolUse"]["name"])
    """
)


def test_opentelemetry_instrument_records_bedrock_calls(llm, tmp_path: Path):
    """boto3 is patched when the agent imports it (``agent_trace_bedrock``, deferred)."""
    llm.queue("bedrock_converse_tool_use")
    script = tmp_path / "agent.py"
    script.write_text(BEDROCK_AGENT)
    sessions = tmp_path / "sessions"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_", "PYTEST_"))}
    env.update(FAKE_URL=llm.base_url, AGENT_TRACE_DIR=str(sessions), AGENT_TRACE_ZIP="false")
    exe = Path(sys.executable).with_name("opentelemetry-instrument")
    done = subprocess.run(
        [str(exe), sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "get_weather"
    (path,) = sessions.glob("*.jsonl")
    session = load_session(path)
    (chat,) = [s for s in session.spans if s.name == "chat m1"]
    assert chat.attributes["gen_ai.provider.name"] == "aws.bedrock"
    assert chat.attributes["gen_ai.response.id"] == "req-converse-tool01"
    assert len(session.snapshots) == 1


@pytest.mark.parametrize(
    "module, cls, dist",
    [
        ("openai", "OpenAIInstrumentor", "openai"),
        ("anthropic", "AnthropicInstrumentor", "anthropic"),
        ("bedrock", "BedrockInstrumentor", "botocore"),
        ("ollama", "OllamaInstrumentor", "ollama"),
        ("mistral", "MistralInstrumentor", "mistralai"),
        ("litellm", "LiteLLMInstrumentor", "litellm"),
        ("langchain", "LangChainInstrumentor", "langchain-core"),
        ("strands", "StrandsInstrumentor", "strands-agents"),
    ],
)
def test_declared_versions_cover_the_installed_ones(module, cls, dist):
    import importlib

    instrumentor = getattr(importlib.import_module(f"otel_agent_trace.instrumentation.{module}"), cls)()
    deps = instrumentor.instrumentation_dependencies()
    assert any(d.startswith(dist) for d in deps)
    assert get_dependency_conflicts(deps) is None, f"{dist} {version(dist)} is outside {deps}"
