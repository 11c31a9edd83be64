"""LiteLLM (the real ``litellm`` against the local server): ``completion`` / ``acompletion``,
plain and streamed, make one ``chat {model}`` span per call whichever provider LiteLLM calls —
through the ``openai`` SDK (OpenAI) or its own ``httpx`` client (Anthropic) — never a second one
from the provider's client underneath; the run replays with the server stopped."""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of its price list at import

import litellm  # noqa: E402
import pytest  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402
from otel_agent_trace.offline.loader import load_session  # noqa: E402
from tests.genai.genai_helpers import model_spans, one_model_span, strip_digests, uninstrumented  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

SYSTEM = {"role": "system", "content": "You answer weather questions."}
USER = {"role": "user", "content": "What's the weather in Paris?"}
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture(scope="module", autouse=True)
def litellm_instrumented(provider):
    inst = LiteLLMInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


def _openai(base_url: str) -> dict[str, object]:
    return {
        "model": "openai/gpt-4o-mini",
        "api_base": f"{base_url}/v1",
        "api_key": "sk-test",
        "max_retries": 0,
    }


def _anthropic(base_url: str) -> dict[str, object]:
    return {"model": "anthropic/claude-3-5-haiku-latest", "api_base": base_url, "api_key": "sk-ant-test"}


def test_completion_through_the_openai_sdk_is_one_span(llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call")
    response = litellm.completion(
        messages=[SYSTEM, USER], tools=[TOOL], temperature=0.2, **_openai(llm.base_url)
    )
    assert response.choices[0].message.tool_calls[0].function.name == "get_weather"
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    span = one_model_span(memory_exporter)  # the openai SDK call underneath made none
    a = span.attributes
    assert span.name == "chat gpt-4o-mini" and span.kind is SpanKind.CLIENT
    assert span.instrumentation_scope.name == "otel_agent_trace"
    assert a["gen_ai.provider.name"] == "openai" and a["gen_ai.request.model"] == "gpt-4o-mini"
    assert a["gen_ai.request.temperature"] == 0.2
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert a["gen_ai.usage.input_tokens"] > 0

    session = load_session(path)
    conversation = strip_digests(session.conversation())
    assert conversation[:2] == [SYSTEM, USER]
    assert conversation[2]["tool_calls"][0]["function"]["name"] == "get_weather"
    (snap,) = session.snapshots
    assert snap["system_prompt"] == "You answer weather questions." and snap["tools_loaded"] == [
        "get_weather"
    ]


def test_completion_through_its_own_http_client_is_one_span(llm, memory_exporter):
    """Anthropic: LiteLLM speaks the Messages API itself over httpx."""
    llm.queue("anthropic_messages_tool_use")
    response = litellm.completion(
        messages=[SYSTEM, USER], tools=[TOOL], max_tokens=300, **_anthropic(llm.base_url)
    )
    assert response.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert llm.requests[0]["path"] == "/v1/messages"
    span = one_model_span(memory_exporter)
    a = span.attributes
    assert span.name == "chat claude-3-5-haiku-latest"
    assert a["gen_ai.provider.name"] == "anthropic" and a["gen_ai.request.max_tokens"] == 300
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)


def test_stream_is_passed_through_and_assembled(llm, provider, memory_exporter):
    llm.queue("openai_chat_tool_call_stream")
    chunks = list(litellm.completion(messages=[USER], tools=[TOOL], stream=True, **_openai(llm.base_url)))
    span = one_model_span(memory_exporter)
    llm.queue("openai_chat_tool_call_stream")
    plain = uninstrumented(
        LiteLLMInstrumentor,
        provider,
        lambda: list(litellm.completion(messages=[USER], tools=[TOOL], stream=True, **_openai(llm.base_url))),
    )
    strip = [c.model_dump(exclude={"created"}) for c in chunks]
    assert strip == [c.model_dump(exclude={"created"}) for c in plain]  # the same chunks
    assert llm.requests[0]["body"] == llm.requests[1]["body"]
    a = span.attributes
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert a["agent_trace.tool_calls.names"] == ("get_weather",)
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)


async def test_acompletion_plain_and_streamed(llm, memory_exporter):
    llm.queue("openai_chat_final", "anthropic_messages_final_stream")
    response = await litellm.acompletion(messages=[USER], **_openai(llm.base_url))
    stream = await litellm.acompletion(
        messages=[USER], stream=True, max_tokens=100, **_anthropic(llm.base_url)
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream])
    assert response.choices[0].message.content and text
    plain, streamed = model_spans(memory_exporter)
    assert plain.attributes["gen_ai.provider.name"] == "openai"
    assert streamed.attributes["gen_ai.provider.name"] == "anthropic"
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert len({s.context.span_id for s in model_spans(memory_exporter)}) == 2


def test_errors_are_raised_unchanged(llm, memory_exporter):
    llm.queue("openai_error_400")
    with pytest.raises(litellm.BadRequestError):
        litellm.completion(messages=[USER], **_openai(llm.base_url))
    span = one_model_span(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR and span.attributes["error.type"] == "BadRequestError"


def test_requests_are_the_same_with_and_without_us(llm, provider):
    llm.queue("anthropic_messages_tool_use", "anthropic_messages_tool_use")
    litellm.completion(messages=[SYSTEM, USER], tools=[TOOL], max_tokens=300, **_anthropic(llm.base_url))
    uninstrumented(
        LiteLLMInstrumentor,
        provider,
        lambda: litellm.completion(
            messages=[SYSTEM, USER], tools=[TOOL], max_tokens=300, **_anthropic(llm.base_url)
        ),
    )
    first, second = llm.requests
    assert first["body"] == second["body"]


def test_no_message_text_in_the_shareable_tier(llm, checkpoint):
    planted = "planted-phrase-l1tellm"
    llm.queue("openai_chat_final_stream")
    for _ in litellm.completion(
        messages=[{"role": "system", "content": planted}, USER], stream=True, **_openai(llm.base_url)
    ):
        pass
    trace_file, checkpoint_file = sorted(checkpoint.files, key=lambda p: "checkpoint" in p.name)
    checkpoint.stop()
    assert planted not in trace_file.read_text()
    assert planted in checkpoint_file.read_text()


def _agent_run(base_url: str) -> list[object]:
    """A tool-calling loop on LiteLLM (OpenAI's API, then Anthropic's, streamed): one agent span."""
    with oat.agent("litellm-weather"):
        messages: list[object] = [SYSTEM, USER]
        first = litellm.completion(messages=messages, tools=[TOOL], **_openai(base_url))
        message = first.choices[0].message
        messages.append(message.model_dump())
        for call in message.tool_calls or ():
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "18°C, sunny"})
        stream = litellm.completion(
            messages=messages, tools=[TOOL], stream=True, max_tokens=300, **_anthropic(base_url)
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream)
    return [message.tool_calls[0].function.name, text]


def test_one_trace_per_run_and_model_replay_with_the_server_stopped(tmp_path, memory_exporter):
    recorded, replayed, report, path = record_then_replay(
        tmp_path, ("openai_chat_tool_call", "anthropic_messages_final_stream"), _agent_run
    )
    # each request under the LiteLLM span that made it (the openai SDK's call made none)
    assert exchange_holders(path) == ["chat gpt-4o-mini", "chat claude-3-5-haiku-latest"]
    assert replayed == recorded and recorded[1]
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    spans = memory_exporter.get_finished_spans()
    recorded_run = [s for s in spans if s.context.trace_id == spans[0].context.trace_id]
    names = sorted(s.name for s in recorded_run if s.name.startswith(("chat", "invoke_agent")))
    assert names == ["chat claude-3-5-haiku-latest", "chat gpt-4o-mini", "invoke_agent litellm-weather"]


def test_under_strands_one_span_per_model_call(llm, memory_exporter):
    """Strands' ``LiteLLMModel`` calls ``litellm.acompletion(stream=True)`` inside its own model
    span: that span describes the call (claimed), neither LiteLLM nor the openai SDK under it
    makes a second one."""
    from strands import Agent, tool
    from strands.models.litellm import LiteLLMModel

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "18°C, sunny"

    model = LiteLLMModel(
        client_args={"api_base": f"{llm.base_url}/v1", "api_key": "sk-test"}, model_id="openai/gpt-4o-mini"
    )
    agent = Agent(model=model, tools=[get_weather], name="weather", callback_handler=None)
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    agent("What's the weather in Paris?")
    assert len(llm.requests) == 2
    first, second = model_spans(memory_exporter)
    for span in (first, second):
        assert span.name == "chat openai/gpt-4o-mini" and span.kind is SpanKind.CLIENT
        assert span.instrumentation_scope.name == "strands.telemetry.tracer"
        assert span.attributes["gen_ai.provider.name"] == "openai"
    assert first.attributes["agent_trace.tool_calls.names"] == ("get_weather",)
    assert len({s.context.trace_id for s in memory_exporter.get_finished_spans()}) == 1


LITELLM_AGENT = """
import json, os
import litellm

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
base = os.environ["OPENAI_BASE_URL"]
messages = [{"role": "user", "content": "What is the weather in Paris?"}]
first = litellm.completion(model="openai/gpt-4o-mini", messages=messages, tools=TOOLS, api_base=base)
call = first.choices[0].message.tool_calls[0]
result = {"role": "tool", "tool_call_id": call.id, "content": "18C"}
messages += [first.choices[0].message.model_dump(), result]
final = litellm.completion(model="openai/gpt-4o-mini", messages=messages, tools=TOOLS, api_base=base)
print(json.dumps({"tool_call": call.id, "answer": final.choices[0].message.content,
                  "cost_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")}))
"""


def test_a_replay_reads_litellms_own_price_list_not_github(tmp_path, monkeypatch):
    """LiteLLM fetches its price list from GitHub at import unless ``LITELLM_LOCAL_MODEL_COST_MAP``
    is true; a replay refuses that request, which stopped the agent at ``import litellm``. The
    replayed process gets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` unless the user set it: the
    recording (made here with the variable set: no network) replays with it unset."""
    from tests.model_replay.conftest import agent_output, record, replay

    script = tmp_path / "litellm_agent.py"
    script.write_text(LITELLM_AGENT)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    recorded = record(script, tmp_path / "run")
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP")

    done, report = replay(recorded)
    assert done.returncode == 0, done.stderr
    out = json.loads(agent_output(done))
    assert out == {**json.loads(recorded.output), "cost_map": "True"}
    assert out["tool_call"] == "call_weather_1" and out["answer"] == "It is 18°C and sunny in Paris."
    assert report["refused"] == [] and report["divergences"] == [] and report["answered"] == 2

    # the user's own setting is kept: asked to fetch, the request is refused as any other
    done, report = replay(recorded, env={"LITELLM_LOCAL_MODEL_COST_MAP": "False"})
    assert done.returncode != 0
    assert report["refused"] == [
        "GET https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"
    ]


def test_a_stream_left_early_ends_its_span(llm, memory_exporter):
    llm.queue("openai_chat_final_stream")
    stream = litellm.completion(messages=[USER], stream=True, **_openai(llm.base_url))
    first = next(iter(stream))
    assert first.choices[0].delta is not None
    stream.close()  # left after the first chunk: the span ends with what was read
    span = one_model_span(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True
    assert span.attributes["gen_ai.request.stream"] is True
