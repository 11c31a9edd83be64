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
        ("groq", "GroqInstrumentor", "groq"),
        ("cohere", "CohereInstrumentor", "cohere"),
        ("litellm", "LiteLLMInstrumentor", "litellm"),
        ("langchain", "LangChainInstrumentor", "langchain-core"),
        ("strands", "StrandsInstrumentor", "strands-agents"),
        ("agno", "AgnoInstrumentor", "agno"),
        ("dspy", "DSPyInstrumentor", "dspy"),
    ],
)
def test_declared_versions_cover_the_installed_ones(module, cls, dist):
    import importlib

    instrumentor = getattr(importlib.import_module(f"otel_agent_trace.instrumentation.{module}"), cls)()
    deps = instrumentor.instrumentation_dependencies()
    assert any(d.startswith(dist) for d in deps)
    assert get_dependency_conflicts(deps) is None, f"{dist} {version(dist)} is outside {deps}"


PROVIDERS_AGENT = textwrap.dedent(
    """
    import os
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm, ollama
    from mistralai.client import Mistral

    url = os.environ["FAKE_URL"]
    user = [{"role": "user", "content": "Hi there"}]
    a = ollama.Client(host=url).chat("qwen3:1.7b", user).message.content
    b = Mistral(api_key="m", server_url=url).chat.complete(model="mistral-small-latest", messages=user)
    c = litellm.completion(model="openai/gpt-4o-mini", messages=user, api_base=url + "/v1", api_key="sk")
    print(a, "|", b.choices[0].message.content, "|", c.choices[0].message.content)
    """
)


def test_opentelemetry_instrument_records_ollama_mistral_and_litellm_calls(llm, tmp_path: Path):
    """Each library is patched when the agent imports it; no version warning for the pinned ones."""
    llm.queue("ollama_chat_final", "mistral_chat_final", "openai_chat_text")
    script = tmp_path / "agent.py"
    script.write_text(PROVIDERS_AGENT)
    sessions = tmp_path / "sessions"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_", "PYTEST_"))}
    env.update(FAKE_URL=llm.base_url, AGENT_TRACE_DIR=str(sessions), AGENT_TRACE_ZIP="false")
    exe = Path(sys.executable).with_name("opentelemetry-instrument")
    done = subprocess.run(
        [str(exe), sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "only instruments" not in done.stderr
    assert done.stdout.strip().count("It is 18°C and sunny in Paris.") == 2
    (path,) = sessions.glob("*.jsonl")
    models = [
        s for s in load_session(path).spans if (s.attributes or {}).get("gen_ai.operation.name") == "chat"
    ]
    assert [(s.name, s.attributes["gen_ai.provider.name"]) for s in models] == [
        ("chat qwen3:1.7b", "ollama"),
        ("chat mistral-small-latest", "mistral_ai"),
        ("chat gpt-4o-mini", "openai"),  # LiteLLM's; the openai SDK's call under it made none
    ]
