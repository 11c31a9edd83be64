"""LangChain chat models and LangGraph agents (langchain-openai against the replay server): one
``chat`` span per model call (the OpenAI SDK call inside makes none), an ``invoke_agent`` span
per graph run, and a session that rebuilds the agent's conversation."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from opentelemetry.trace import SpanKind, StatusCode

from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import model_spans, strip_digests


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


@pytest.fixture
def chat(llm):
    return ChatOpenAI(
        model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0, temperature=0.1
    )


def _react_agent(chat):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(chat, [get_weather], prompt="You answer weather questions.", name="weather")


def test_invoke_makes_one_chat_span(chat, memory_exporter):
    msg = chat.invoke("Hi there")
    assert isinstance(msg, AIMessage) and msg.content == "Hello! How can I help you today?"
    spans = memory_exporter.get_finished_spans()
    assert [s.name for s in spans] == ["chat gpt-4o-mini"]  # the openai call inside adds no span
    a = spans[0].attributes
    assert spans[0].kind is SpanKind.CLIENT
    assert a["gen_ai.provider.name"] == "openai" and a["gen_ai.request.temperature"] == 0.1
    assert a["gen_ai.response.id"] == "chatcmpl-text001"
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == 19 and a["gen_ai.usage.cache_read.input_tokens"] == 4


def test_stream_passes_chunks_through(chat, memory_exporter):
    chunks = list(chat.stream("Hi there"))
    assert "".join(c.content for c in chunks) == "Hello! How can I help you today?"
    (span,) = model_spans(memory_exporter)
    assert span.attributes["gen_ai.request.stream"] is True
    assert span.attributes["gen_ai.usage.output_tokens"] == 9
    assert "agent_trace.stream.abandoned" not in span.attributes
    # as the non-streamed call has them: the response id (only the raw chunks carry it), the
    # response model and the provider's finish reason
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-strm001"
    assert span.attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert span.attributes["gen_ai.response.finish_reasons"] == ("stop",)


async def test_async_stream_has_the_response_id(chat, memory_exporter):
    text = "".join([c.content async for c in chat.astream("Hi there")])
    assert text == "Hello! How can I help you today?"
    (span,) = model_spans(memory_exporter)
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-strm001"


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_responses_api_calls_have_finish_reasons(streamed, llm, memory_exporter):
    """``use_responses_api``: a status, not a finish reason, in LangChain's metadata; the span has
    the reason as the bare SDK's Responses span has it."""
    chat = ChatOpenAI(
        model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0, use_responses_api=True
    )
    llm.queue("openai_responses_tool_call_stream" if streamed else "openai_responses_tool_call")
    llm.queue("openai_responses_final_stream" if streamed else "openai_responses_final")
    bound = chat.bind_tools([get_weather])
    for _ in range(2):
        if streamed:
            list(bound.stream("What's the weather in Paris?"))
        else:
            bound.invoke("What's the weather in Paris?")
    first, second = model_spans(memory_exporter)
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert first.attributes["gen_ai.response.id"] == ("resp_tool002" if streamed else "resp_tool001")
    assert first.attributes["agent_trace.tool_calls.ids"] == ("call_weather_r1",)


def test_streamed_agent_run_model_spans_have_response_ids(llm, memory_exporter):
    streaming = ChatOpenAI(
        model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0, streaming=True
    )
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    agent = _react_agent(streaming)
    chunks = list(
        agent.stream({"messages": [("user", "What's the weather in Paris?")]}, stream_mode="messages")
    )
    assert "".join(c.content for c, _meta in chunks if isinstance(c, AIMessage)).endswith(
        "It is 18°C and sunny in Paris."
    )
    chats = model_spans(memory_exporter)
    assert [c.attributes["gen_ai.response.id"] for c in chats] == ["chatcmpl-tool002", "chatcmpl-final02"]
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [("tool_calls",), ("stop",)]
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    # streamed under the graph (it calls invoke; the model streams inside): said, and timed
    assert all(c.attributes.get("gen_ai.request.stream") is True for c in chats)
    assert all(c.attributes["gen_ai.response.time_to_first_chunk"] > 0 for c in chats)
    (run,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert all(c.parent.span_id == run.context.span_id for c in chats)


def test_abandoned_stream_ends_span(chat, memory_exporter):
    gen = chat.stream("Hi there")
    next(gen)
    gen.close()
    (span,) = model_spans(memory_exporter)
    assert span.attributes["agent_trace.stream.abandoned"] is True


async def test_async_invoke_and_stream(chat, memory_exporter):
    msg = await chat.ainvoke("Hi there")
    assert msg.content.startswith("Hello")
    text = "".join([c.content async for c in chat.astream("Hi there")])
    assert text == "Hello! How can I help you today?"
    assert len(model_spans(memory_exporter)) == 2


def test_error_is_reraised_unchanged(chat, llm, memory_exporter):
    import openai

    llm.queue("openai_error_500")
    with pytest.raises(openai.InternalServerError):
        chat.invoke("Hi there")
    (span,) = model_spans(memory_exporter)
    assert span.status.status_code is StatusCode.ERROR


def test_react_agent_run_is_one_agent_with_model_calls_under_it(chat, llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    agent = _react_agent(chat)
    out = agent.invoke(
        {"messages": [("user", "What's the weather in Paris?")]}, {"configurable": {"thread_id": "t-1"}}
    )
    final = out["messages"]
    assert [type(m) for m in final] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    spans = memory_exporter.get_finished_spans()
    (run,) = [s for s in spans if s.name == "invoke_agent weather"]
    assert run.attributes["gen_ai.conversation.id"] == "t-1"
    chats = model_spans(memory_exporter)
    assert len(chats) == 2 and all(c.parent.span_id == run.context.span_id for c in chats)
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    assert not [s for s in spans if s.instrumentation_scope.name.startswith("openai")]

    session = load_session(path)
    # The model's own output as it returned it; LangGraph names the message after the agent
    # afterwards, which is how the tool-call message came back as input of the second call.
    assert strip_digests(session.conversation()) == [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "name": "weather",
            "tool_calls": [{"id": "call_weather_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {
            "role": "tool",
            "content": "18°C and sunny in Paris",
            "name": "get_weather",
            "tool_call_id": "call_weather_1",
        },
        {"role": "assistant", "content": "It is 18°C and sunny in Paris."},
    ]
    snaps = session.snapshots
    assert len(snaps) == 2 and snaps[-1]["system_prompt"] == "You answer weather questions."
    assert snaps[-1]["last_query"] == "What's the weather in Paris?"
    assert snaps[-1]["last_result"] == "It is 18°C and sunny in Paris."
    assert snaps[-1]["model_info"]["provider"] == "openai"


async def test_async_agent_run(chat, llm, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    out = await _react_agent(chat).ainvoke({"messages": [("user", "What's the weather in Paris?")]})
    assert out["messages"][-1].content == "It is 18°C and sunny in Paris."
    (run,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert all(c.parent.span_id == run.context.span_id for c in model_spans(memory_exporter))


def test_system_message_becomes_system_instructions(chat, checkpoint):
    chat.invoke([SystemMessage("Be brief."), HumanMessage("Hi")])
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    (snap,) = load_session(path).snapshots
    assert snap["system_prompt"] == "Be brief."
