"""Strands Agents with its default provider, Amazon Bedrock (``BedrockModel``: the real boto3
client against the replay server): one ``chat {model}`` span per model call, Strands' own, with
the facts of the Bedrock call underneath (which makes no span of its own); the tool call under the
agent; one trace; the conversation in the session."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from opentelemetry.trace import SpanKind
from strands import Agent, tool
from strands.models.bedrock import BedrockModel

from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import strip_digests

MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm, streaming: bool) -> Agent:
    model = BedrockModel(
        model_id=MODEL,
        streaming=streaming,
        boto_session=boto3.Session(
            aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
        ),
        endpoint_url=llm.base_url,
        boto_client_config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
        max_tokens=500,
        temperature=0.2,
    )
    return Agent(
        model=model,
        tools=[get_weather],
        system_prompt="You answer weather questions.",
        name="weather",
        callback_handler=None,
    )


def _ancestors(span, by_id):
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        yield span


@pytest.mark.parametrize("streaming", [True, False], ids=["converse_stream", "converse"])
def test_bedrock_agent_run(llm, checkpoint, memory_exporter, streaming):
    if streaming:
        llm.queue("bedrock_converse_stream_tool_use", "bedrock_converse_stream_final")
        call_id, request_ids = "tooluse_weather02", ["req-stream-tool01", "req-stream-final01"]
    else:
        llm.queue("bedrock_converse_tool_use", "bedrock_converse_final")
        call_id, request_ids = "tooluse_weather01", ["req-converse-tool01", "req-converse-final01"]
    agent = _agent(llm, streaming)
    result = agent("What's the weather in Paris?")
    assert str(result).strip() == "It is 18°C and sunny in Paris."
    assert len(llm.requests) == 2 and llm.requests[0]["path"].endswith(
        "/converse-stream" if streaming else "/converse"
    )
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    spans = memory_exporter.get_finished_spans()
    names = [s.name for s in spans]
    # Strands' own model spans, one per model call; none of ours beside or under them
    assert names.count(f"chat {MODEL}") == 2 and names.count("invoke_agent weather") == 1
    assert {s.instrumentation_scope.name for s in spans} == {"strands.telemetry.tracer"}
    assert len({s.context.trace_id for s in spans}) == 1  # one trace
    first, second = [s for s in spans if s.name == f"chat {MODEL}"]
    for span, request_id in zip((first, second), request_ids, strict=True):
        a = span.attributes
        assert span.kind is SpanKind.CLIENT
        assert a["gen_ai.provider.name"] == "aws.bedrock" and a["gen_ai.request.model"] == MODEL
        assert a["gen_ai.response.id"] == request_id == a["aws.request_id"]  # from the boto3 call
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert a["gen_ai.request.max_tokens"] == 500 and a["gen_ai.request.temperature"] == 0.2
        if streaming:
            assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert first.attributes["agent_trace.tool_calls.ids"] == (call_id,)
    assert first.attributes["agent_trace.tool_calls.names"] == ("get_weather",)

    by_id = {s.context.span_id: s for s in spans}
    tool_span = next(s for s in spans if s.name == "execute_tool get_weather")
    assert tool_span.attributes["gen_ai.tool.call.id"] == call_id  # links to the model turn
    assert "invoke_agent weather" in [s.name for s in _ancestors(tool_span, by_id)]

    session = load_session(path)
    assert strip_digests(session.conversation()) == jsonable(agent.messages)
    snaps = session.snapshots
    assert [s["description"] for s in snaps] == [f"after chat {MODEL}"] * 2 + ["after invoke_agent weather"]
    info = {"type": "BedrockModel", "model_id": MODEL, "provider": "aws.bedrock"}
    assert [s["model_info"] for s in snaps] == [info] * 3
    assert snaps[-1]["last_result"] == "It is 18°C and sunny in Paris."
    assert [s["tools_loaded"] for s in snaps] == [["get_weather"]] * 3
