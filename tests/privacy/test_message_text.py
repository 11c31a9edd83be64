"""Message text stays out of the shareable tier and the OTLP stream, wherever it comes from.

Real agents run under ``opentelemetry-instrument`` with ``AGENT_TRACE_TIER=both``, the session
files and a real Phoenix as exporters, content capture off (the default): Strands with its OpenAI
provider (streamed), LangGraph with langchain-openai (plain and streamed), both against the local
fake model server, and spans carrying OpenInference / OpenLLMetry / semantic-convention / Strands
attributes and events made with the SDK tracer. A phrase planted in the user prompt and one in the
system prompt must be absent from the trace tier's file and every ZIP member and from what Phoenix
received, and present in the checkpoint tier.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import orjson
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.recording.forwarding import ShareableSpanExporter
from otel_agent_trace.redaction import Redactor
from otel_agent_trace.settings import CONTENT_SPAN_AND_EVENT, Settings
from tests.e2e.helpers import run_instrumented
from tests.fakes.llm_server import FakeLLMServer

from .planted import jsonl_text, strings, zip_text

# The agents, one per mode (written to a file and run by the test). Prints the trace id last.
AGENT = '''
import json, os, sys
from opentelemetry import trace

PROMPT = os.environ["PLANTED_PROMPT"]
SYSTEM = os.environ["PLANTED_SYSTEM"]
BASE_URL = os.environ["FAKE_LLM_URL"]
mode = sys.argv[1]
tracer = trace.get_tracer("message-text-test")


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18 C and sunny in {city}"


def run_strands():
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"base_url": BASE_URL, "api_key": "sk-test", "max_retries": 0}, model_id="gpt-4o-mini"
    )
    agent = Agent(model=model, tools=[tool(get_weather)], system_prompt=SYSTEM, name="weather",
                  callback_handler=None)
    print(agent(f"What is the weather in Paris? {PROMPT}"))


def run_langgraph(streamed):
    import warnings
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent
    chat = ChatOpenAI(model="gpt-4o-mini", base_url=BASE_URL, api_key="sk-test", max_retries=0,
                      streaming=streamed)
    graph = create_react_agent(chat, [tool(get_weather)], prompt=SYSTEM, name="weather")
    inputs = {"messages": [("user", f"What is the weather in Paris? {PROMPT}")]}
    if streamed:
        for _ in graph.stream(inputs, stream_mode="values"):
            pass
    else:
        print(graph.invoke(inputs)["messages"][-1].content)


def run_sdk():
    user = [{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]
    with tracer.start_as_current_span("openinference llm", attributes={
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"messages": [SYSTEM, PROMPT]}),
        "input.mime_type": "application/json",
        "output.value": "It is sunny.",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": SYSTEM,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.text": PROMPT,
        "llm.output_messages.0.message.content": "It is sunny.",
    }):
        pass
    with tracer.start_as_current_span("openllmetry chat", attributes={
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": PROMPT,
        "gen_ai.completion.0.content": "It is sunny.",
        "gen_ai.completion.0.finish_reason": "stop",
    }):
        pass
    with tracer.start_as_current_span("chat semconv") as span:
        span.set_attribute("gen_ai.input.messages", json.dumps(user))
        span.set_attribute("gen_ai.system_instructions", json.dumps([{"type": "text", "content": SYSTEM}]))
        span.add_event("gen_ai.client.inference.operation.details",
                       {"gen_ai.input.messages": json.dumps(user)})
    with tracer.start_as_current_span("chat strands-like") as span:
        span.add_event("gen_ai.system.message", {"content": json.dumps([{"text": SYSTEM}])})
        span.add_event("gen_ai.user.message", {"content": json.dumps([{"text": PROMPT}])})
        span.add_event("gen_ai.choice", {"message": json.dumps([{"text": PROMPT}]), "finish_reason": "stop"})


with tracer.start_as_current_span("run") as root:
    if mode == "strands":
        run_strands()
    elif mode.startswith("langgraph"):
        run_langgraph(mode == "langgraph-stream")
    else:
        run_sdk()
print(format(root.get_span_context().trace_id, "032x"))
'''

# What the fake model server answers, per mode (a tool call, then the final answer).
SCRIPTS = {
    "strands": ("openai_chat_tool_call_stream", "openai_chat_final_stream"),
    "langgraph": ("openai_chat_tool_call", "openai_chat_final"),
    "langgraph-stream": ("openai_chat_tool_call_stream", "openai_chat_final_stream"),
    "sdk": (),
}


@pytest.fixture(scope="module")
def llm():
    server = FakeLLMServer().start()
    yield server
    server.stop()


def _files(directory: Path) -> dict[str, Path]:
    found = sorted(p.name for p in directory.iterdir())
    trace = [directory / n for n in found if n.endswith(fmt.JSONL_SUFFIX) and ".checkpoint." not in n]
    checkpoint = [directory / n for n in found if n.endswith(fmt.CHECKPOINT_SUFFIX + fmt.JSONL_SUFFIX)]
    assert len(trace) == 1 and len(checkpoint) == 1, found  # no child processes in these runs
    out = {"trace": trace[0], "checkpoint": checkpoint[0]}
    for tier in ("trace", "checkpoint"):
        out[f"{tier}_zip"] = out[tier].with_suffix(fmt.ZIP_SUFFIX)
        assert out[f"{tier}_zip"].exists(), found
    return out


@pytest.mark.phoenix
@pytest.mark.parametrize("mode", list(SCRIPTS))
def test_no_message_text_in_the_shareable_tier_or_the_otlp_stream(tmp_path, llm, phoenix, mode):
    phrases = {
        "user prompt": "planted-prompt-" + secrets.token_hex(8),
        "system prompt": "planted-system-" + secrets.token_hex(8),
    }
    llm.reset()
    llm.queue(*SCRIPTS[mode])
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    sessions = tmp_path / "sessions"
    env = {
        "PLANTED_PROMPT": phrases["user prompt"],
        "PLANTED_SYSTEM": phrases["system prompt"],
        "FAKE_LLM_URL": llm.openai_url,
        "AGENT_TRACE_TIER": "both",
        "AGENT_TRACE_DIR": str(sessions),
        "OTEL_TRACES_EXPORTER": "agent_session,otlp",
        **phoenix.otlp_env("http/protobuf"),
    }
    done = run_instrumented(script, tmp_path, env, mode)
    assert done.returncode == 0, done.stderr
    if SCRIPTS[mode]:  # the agent really talked to the model, with the planted prompts
        sent = orjson.dumps([r["body"] for r in llm.requests]).decode()
        assert len(llm.requests) == 2 and all(p in sent for p in phrases.values()), sent[:2000]
    trace_id = done.stdout.strip().splitlines()[-1]
    files = _files(sessions)

    def missing(text: str) -> list[str]:
        return [what for what, phrase in phrases.items() if phrase not in text]

    trace_text = jsonl_text(files["trace"])
    assert missing(trace_text) == list(phrases), "message text in the shareable trace tier"
    assert '"sha256"' in trace_text  # it is there as length + SHA-256
    for member, text in zip_text(files["trace_zip"]).items():
        assert missing(text) == list(phrases), f"message text in the trace ZIP's {member}"

    assert missing(jsonl_text(files["checkpoint"])) == [], "the checkpoint tier must be complete"
    assert missing("\n".join(zip_text(files["checkpoint_zip"]).values())) == []

    ends = sum(1 for line in files["trace"].read_bytes().splitlines() if b'"type":"span.end"' in line)
    spans = phoenix.spans(trace_id, expect=ends)
    received = "\n".join(strings(spans)) + "\n" + orjson.dumps(spans).decode()
    assert missing(received) == list(phrases), "message text reached the OTLP receiver"
    if mode in ("strands", "sdk"):  # the framework's own message text, as the receiver got it
        assert "<content chars=" in received


def test_with_content_capture_on_text_is_kept_redacted_but_snapshot_system_prompt_is_hashed(
    provider, session_dir, memory_exporter
):
    """Content capture on: framework message text stays in the trace tier and the OTLP stream,
    redacted; a snapshot's system prompt stays length + SHA-256 in the trace tier all the same."""
    prompt, system = "planted-prompt-" + secrets.token_hex(8), "planted-system-" + secrets.token_hex(8)
    secret = "sk-proj-" + secrets.token_hex(20)
    said = f"{prompt} with the key {secret}"
    settings = Settings(
        directory=session_dir, tiers=("trace", "checkpoint"), capture_content=CONTENT_SPAN_AND_EVENT
    )
    tracer = provider.get_tracer("message-text-test")
    with oat.session("capture-on", directory=session_dir, settings=settings) as session:
        with tracer.start_as_current_span("chat", attributes={"input.value": said}) as span:
            span.add_event("gen_ai.user.message", {"content": said})
            oat.snapshot("turn", messages=[{"role": "user", "content": prompt}], system_prompt=system)
        trace_file, checkpoint_file = sorted(session.files, key=lambda p: "checkpoint" in p.name)
    trace_text = jsonl_text(trace_file)
    assert prompt in trace_text and secret not in trace_text  # kept, redacted
    assert system not in trace_text
    entries = [orjson.loads(line) for line in trace_file.read_bytes().splitlines()]
    (snap,) = [e for e in entries if e["type"] == fmt.SNAPSHOT]
    assert set(snap["system_prompt"]) == {"chars", "sha256"}
    assert system in jsonl_text(checkpoint_file)

    (finished,) = [s for s in memory_exporter.get_finished_spans() if s.name == "chat"]
    for keep_text in (True, False):
        inner = InMemorySpanExporter()
        ShareableSpanExporter(inner, Redactor(env={}), keep_text=keep_text).export([finished])
        (out,) = inner.get_finished_spans()
        sent = orjson.dumps([dict(out.attributes), [dict(e.attributes) for e in out.events]]).decode()
        assert (prompt in sent) is keep_text and secret not in sent
        assert ("<content chars=" in sent) is not keep_text
