"""Amazon Bedrock (the real boto3 ``bedrock-runtime`` client, local replay server speaking Bedrock's
REST JSON and AWS event-stream framing): converse, converse_stream, invoke_model and
invoke_model_with_response_stream make one ``chat {model}`` span each, hand the caller exactly
what botocore hands back, and put the call's messages and a snapshot in the session."""

from __future__ import annotations

import gc
import json

import botocore.exceptions
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from otel_agent_trace.instrumentation.bedrock import BedrockInstrumentor
from otel_agent_trace.offline.loader import load_session
from tests.fakes.llm_server import load_recording
from tests.genai.genai_helpers import entries, model_spans, one_model_span, strip_digests

MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
USER = [{"role": "user", "content": [{"text": "What's the weather in Paris?"}]}]
SYSTEM = [{"text": "You answer weather questions."}]
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Weather of a city.",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
            }
        }
    ]
}
CONVERSE = {"modelId": MODEL, "messages": USER, "system": SYSTEM, "toolConfig": TOOLS}
ANTHROPIC_BODY = {
    "anthropic_version": "bedrock-2023-05-31",
    "max_tokens": 200,
    "temperature": 0.3,
    "system": "You answer weather questions.",
    "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
    "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
}


def _checkpoint_file(session):
    path = next(p for p in session.files if "checkpoint" in p.name)
    session.stop()
    return path


def _without_instrumentation(provider, call):
    """``call()`` with our Bedrock part switched off (what the caller gets without us)."""
    BedrockInstrumentor().uninstrument()
    try:
        return call()
    finally:
        BedrockInstrumentor().instrument(tracer_provider=provider)


def test_converse_span_and_session(bedrock_client, llm, checkpoint, memory_exporter):
    llm.queue("bedrock_converse_tool_use")
    response = bedrock_client.converse(
        **CONVERSE,
        inferenceConfig={"maxTokens": 300, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"]},
    )
    assert response["stopReason"] == "tool_use"
    path = _checkpoint_file(checkpoint)

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}" and span.kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "aws.bedrock" and a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == MODEL and "gen_ai.request.stream" not in a
    assert a["gen_ai.request.max_tokens"] == 300 and a["gen_ai.request.temperature"] == 0.5
    assert a["gen_ai.request.top_p"] == 0.9 and a["gen_ai.request.stop_sequences"] == ("END",)
    # Converse has no response id of its own: the request id AWS gave the call stands for it
    assert a["gen_ai.response.id"] == "req-converse-tool01" == a["aws.request_id"]
    assert a["gen_ai.response.finish_reasons"] == ("tool_use",)
    # input tokens count the cached ones too (50 uncached + 5 read from the cache)
    assert a["gen_ai.usage.input_tokens"] == 55 and a["gen_ai.usage.cache_read.input_tokens"] == 5
    assert a["gen_ai.usage.output_tokens"] == 20
    assert a["agent_trace.tool_calls.ids"] == ("tooluse_weather01",)
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert "gen_ai.input.messages" not in a  # content stays off the span by default

    session = load_session(path)
    assert strip_digests(session.conversation()) == USER + [response["output"]["message"]]
    (snap,) = session.snapshots
    assert snap["description"] == f"after chat {MODEL}"
    assert snap["system_prompt"] == "You answer weather questions."
    assert snap["last_query"] == "What's the weather in Paris?"
    assert snap["last_result"] == "Let me check the weather."
    assert snap["tools_loaded"] == ["get_weather"]
    assert snap["model_info"] == {"type": "aws.bedrock", "model_id": MODEL, "provider": "aws.bedrock"}
    end = next(e for e in entries(path) if e["type"] == "span.end" and e["name"] == f"chat {MODEL}")
    assert end["content"]["tool_definitions"][0]["name"] == "get_weather"


def test_converse_stream_is_passed_through_and_assembled(
    bedrock_client, llm, provider, checkpoint, memory_exporter
):
    llm.queue("bedrock_converse_stream_tool_use")
    events = list(bedrock_client.converse_stream(**CONVERSE, inferenceConfig={"maxTokens": 300})["stream"])
    path = _checkpoint_file(checkpoint)

    llm.queue("bedrock_converse_stream_tool_use")
    plain = _without_instrumentation(
        provider,
        lambda: list(
            bedrock_client.converse_stream(**CONVERSE, inferenceConfig={"maxTokens": 300})["stream"]
        ),
    )
    assert events == plain  # the same events, in the same order
    assert [next(iter(e)) for e in events][0] == "messageStart" and "metadata" in events[-1]

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.request.max_tokens"] == 300
    assert a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "req-stream-tool01"
    assert a["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert a["gen_ai.usage.input_tokens"] == 50 and a["gen_ai.usage.output_tokens"] == 20
    assert a["agent_trace.tool_calls.ids"] == ("tooluse_weather02",)
    assert "agent_trace.stream.abandoned" not in a

    # the streamed answer, rebuilt in Converse's own shape (as converse() would have returned it)
    assistant = {
        "role": "assistant",
        "content": [
            {"text": "Let me check the weather."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_weather02",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
        ],
    }
    assert strip_digests(load_session(path).conversation()) == USER + [assistant]


def test_invoke_model_with_an_anthropic_body(bedrock_client, llm, provider, checkpoint, memory_exporter):
    body = json.dumps(ANTHROPIC_BODY)
    llm.queue("bedrock_invoke_anthropic_tool_use")
    response = bedrock_client.invoke_model(modelId=MODEL, body=body)
    raw = b"".join(response["body"].iter_chunks(7))  # botocore's own reading, through the proxy
    path = _checkpoint_file(checkpoint)

    llm.queue("bedrock_invoke_anthropic_tool_use")
    plain = _without_instrumentation(provider, lambda: bedrock_client.invoke_model(modelId=MODEL, body=body))
    assert raw == plain["body"].read()  # byte for byte
    assert response["contentType"] == plain["contentType"] == "application/json"

    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == f"chat {MODEL}"
    assert a["gen_ai.request.max_tokens"] == 200 and a["gen_ai.request.temperature"] == 0.3
    assert a["gen_ai.response.id"] == "msg_bdrk_01Tool" and a["aws.request_id"] == "req-invoke-tool01"
    assert a["gen_ai.response.model"] == "claude-3-5-haiku-20241022"
    assert a["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert a["gen_ai.usage.input_tokens"] == 43 and a["gen_ai.usage.output_tokens"] == 25
    assert a["agent_trace.tool_calls.ids"] == ("toolu_bdrk_01Weather",)

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[0] == ANTHROPIC_BODY["messages"][0]
    assert conversation[1] == {"role": "assistant", "content": json.loads(raw)["content"]}
    assert session.snapshots[0]["system_prompt"] == "You answer weather questions."


def test_invoke_model_with_response_stream(bedrock_client, llm, provider, checkpoint, memory_exporter):
    body = json.dumps(ANTHROPIC_BODY)
    llm.queue("bedrock_invoke_anthropic_stream_tool_use")
    events = list(bedrock_client.invoke_model_with_response_stream(modelId=MODEL, body=body)["body"])
    path = _checkpoint_file(checkpoint)

    llm.queue("bedrock_invoke_anthropic_stream_tool_use")
    plain = _without_instrumentation(
        provider,
        lambda: list(bedrock_client.invoke_model_with_response_stream(modelId=MODEL, body=body)["body"]),
    )
    assert events == plain and all(isinstance(e["chunk"]["bytes"], bytes) for e in events)

    a = one_model_span(memory_exporter).attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["gen_ai.response.id"] == "msg_bdrk_01Strm"
    assert a["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert a["gen_ai.usage.input_tokens"] == 40 and a["gen_ai.usage.output_tokens"] == 25
    assert a["agent_trace.tool_calls.ids"] == ("toolu_bdrk_02Weather",)
    output = strip_digests(load_session(path).conversation())[-1]
    assert output["content"][1] == {
        "type": "tool_use",
        "id": "toolu_bdrk_02Weather",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }


@pytest.mark.parametrize(
    "reply, text, reason, usage",
    [
        (  # Meta Llama
            {
                "generation": "Sunny.",
                "prompt_token_count": 9,
                "generation_token_count": 3,
                "stop_reason": "stop",
            },
            "Sunny.",
            "stop",
            (9, 3),
        ),
        (  # Amazon Titan Text
            {
                "inputTextTokenCount": 9,
                "results": [{"tokenCount": 3, "outputText": "Sunny.", "completionReason": "FINISH"}],
            },
            "Sunny.",
            "FINISH",
            (9, 3),
        ),
        (  # Amazon Nova: Converse's shape
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "Sunny."}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 9, "outputTokens": 3},
            },
            [{"text": "Sunny."}],
            "end_turn",
            (9, 3),
        ),
    ],
)
def test_invoke_model_reads_other_families_generically(
    bedrock_client, llm, checkpoint, memory_exporter, reply, text, reason, usage
):
    llm.queue({"status": 200, "json": reply})
    request = {"prompt": "Weather in Paris?", "max_gen_len": 64, "temperature": 0.1}
    answer = json.loads(
        bedrock_client.invoke_model(modelId="meta.llama3", body=json.dumps(request))["body"].read()
    )
    assert answer == reply
    path = _checkpoint_file(checkpoint)
    a = one_model_span(memory_exporter).attributes
    assert a["gen_ai.request.max_tokens"] == 64 and a["gen_ai.request.temperature"] == 0.1
    assert a["gen_ai.response.finish_reasons"] == (reason,)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == usage
    conversation = strip_digests(load_session(path).conversation())
    assert conversation == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": text},
    ]


@pytest.mark.parametrize("how", ["close", "break", "dropped"])
def test_abandoned_stream_ends_its_span(bedrock_client, llm, memory_exporter, how):
    llm.queue("bedrock_converse_stream_tool_use")
    response = bedrock_client.converse_stream(**CONVERSE)
    stream = response["stream"]
    if how == "close":
        next(iter(stream))
        stream.close()
    elif how == "break":
        for _ in stream:
            break
    else:
        next(iter(stream))
        del stream, response
        gc.collect()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.response.id"] == "req-stream-tool01"
    assert span.status.status_code is StatusCode.UNSET


def test_body_closed_unread_ends_its_span(bedrock_client, llm, memory_exporter):
    llm.queue("bedrock_invoke_anthropic_tool_use")
    response = bedrock_client.invoke_model(modelId=MODEL, body=json.dumps(ANTHROPIC_BODY))
    assert model_spans(memory_exporter) == []  # not yet: the answer is in the body
    response["body"].close()
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["aws.request_id"] == "req-invoke-tool01"


def test_errors_are_raised_unchanged(bedrock_client, llm, memory_exporter):
    llm.queue("bedrock_error_throttling")
    with pytest.raises(botocore.exceptions.ClientError) as info:
        bedrock_client.converse(**CONVERSE)
    assert info.value.response["Error"]["Code"] == "ThrottlingException"
    assert type(info.value) is bedrock_client.exceptions.ThrottlingException
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ThrottlingException"
    assert any(e.name == "exception" for e in span.events)


def test_an_error_in_the_stream_is_raised_unchanged(bedrock_client, llm, memory_exporter):
    recording = load_recording("bedrock_converse_stream_tool_use")
    recording["eventstream"] = recording["eventstream"][:3] + [
        {"exception": "modelStreamErrorException", "data": {"message": "The model stopped."}}
    ]
    llm.queue(recording)
    received = []
    with pytest.raises(botocore.exceptions.EventStreamError) as info:
        for event in bedrock_client.converse_stream(**CONVERSE)["stream"]:
            received.append(event)
    assert len(received) == 3 and "The model stopped." in str(info.value)
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "EventStreamError"


def test_other_operations_make_no_span(bedrock_client, llm, memory_exporter):
    llm.queue({"status": 200, "json": {"action": "NONE", "outputs": [], "assessments": []}})
    bedrock_client.apply_guardrail(
        guardrailIdentifier="g1", guardrailVersion="1", source="INPUT", content=[{"text": {"text": "hi"}}]
    )
    assert memory_exporter.get_finished_spans() == ()


def test_semconv_messages_on_the_span_when_asked(bedrock_client, llm, memory_exporter, capture):
    capture("SPAN_ONLY")
    llm.queue("bedrock_converse_tool_use")
    history = USER + [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t0", "name": "get_weather", "input": {}}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t0", "content": [{"text": "18°C"}]}}]},
    ]
    bedrock_client.converse(modelId=MODEL, messages=history, system=SYSTEM, toolConfig=TOOLS)
    a = one_model_span(memory_exporter).attributes
    assert json.loads(a["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "t0", "name": "get_weather", "arguments": {}}],
        },
        {
            "role": "user",
            "parts": [{"type": "tool_call_response", "id": "t0", "response": [{"text": "18°C"}]}],
        },
    ]
    assert json.loads(a["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Let me check the weather."},
                {
                    "type": "tool_call",
                    "id": "tooluse_weather01",
                    "name": "get_weather",
                    "arguments": {"city": "Paris"},
                },
            ],
            "finish_reason": "tool_use",
        }
    ]


def test_no_message_text_in_the_shareable_tier(bedrock_client, llm, checkpoint):
    """The trace tier (the one to share) keeps message text as length + SHA-256 only."""
    planted = "planted-phrase-7f3a91"
    llm.queue("bedrock_converse_stream_final")
    messages = [{"role": "user", "content": [{"text": f"Weather in Paris? {planted}"}]}]
    for _ in bedrock_client.converse_stream(modelId=MODEL, messages=messages, system=[{"text": planted}])[
        "stream"
    ]:
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text() and "sunny in Paris" not in trace_file.read_text()
    assert planted in checkpoint_file.read_text() and "sunny in Paris" in checkpoint_file.read_text()
    reduced = [e for e in entries(trace_file) if e["type"] == "message"]
    assert len(reduced) == 2 and all("content" not in m and len(m["content_sha256"]) == 64 for m in reduced)
