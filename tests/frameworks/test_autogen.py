"""AutoGen (``autogen-agentchat``'s ``AssistantAgent`` on ``autogen-ext``'s
``OpenAIChatCompletionClient``) against the replay server. AutoGen emits its own GenAI spans
(``invoke_agent``, ``execute_tool`` with the call id, ``create_agent``): they are kept and
enriched, none doubled; the model calls (ours, from the openai client) are under AutoGen's agent
span, one trace per run, the session id on every span; the run's input and output and the tool's
arguments and result in the session; what the server saw matching what was recorded; and the
recorded conversation restored into a new agent's model context that continues it.

autogen-ext[openai] needs openai < 3: these run in a virtualenv of their own
(``python -m tests.services.frameworks2 run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.openai")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage, UserMessage  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
RUN = (
    "invoke_agent weather",
    [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
)


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm: Any, stream: bool = False, tool: Any = get_weather) -> AssistantAgent:
    client = OpenAIChatCompletionClient(
        model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0
    )
    return AssistantAgent(
        "weather",
        model_client=client,
        tools=[tool],
        system_message="You answer weather questions.",
        reflect_on_tool_use=True,  # a second model call answers with the tool's result
        model_client_stream=stream,
    )


async def _run(agent: AssistantAgent, streamed: bool) -> Any:
    if not streamed:
        return await agent.run(task=QUESTION)
    async for item in agent.run_stream(task=QUESTION):
        last = item
    return last


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
def test_its_spans_are_enriched_one_tree_per_run(streamed, llm, checkpoint, memory_exporter):
    suffix = "_stream" if streamed else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    agent = _agent(llm, streamed)
    result = asyncio.run(_run(agent, streamed))
    assert result.messages[-1].content == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    # AutoGen's own spans, once each: the agent's creation (its own trace, made by the constructor)
    # and the run, whose spans are one trace
    assert sorted(s.name for s in finished if s.instrumentation_scope.name == "autogen-core") == [
        "create_agent weather",
        "execute_tool get_weather",
        "invoke_agent weather",
    ]
    run_spans = [s for s in finished if s.name != "create_agent weather"]
    assert len({s.context.trace_id for s in run_spans}) == 1
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET", "create_agent"))]
    assert tree(spans) == [RUN]
    run = next(s for s in finished if s.name == "invoke_agent weather")
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["agent_trace.tool_calls.ids"] for c in chats[:1]] == [("call_weather_1",)]

    sent = llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == sent[3]["tool_call_id"] == "call_weather_1"
    assert sent[3]["content"] == TOOL_OUTPUT
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "tool", "assistant"]
    assert recorded[3]["tool_call_id"] == "call_weather_1" and recorded[-1]["content"] == ANSWER
    assert len([e for e in session.events if e.type == "snapshot"]) == 2
    in_session = spans_of(checkpoint_file)
    run_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert run_entry.content["agent_input"] == QUESTION and run_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def test_a_failing_tool_is_on_autogens_span_and_the_run_goes_on(llm, memory_exporter):
    def get_weather(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    llm.queue("openai_chat_tool_call", "openai_chat_final")
    result = asyncio.run(_run(_agent(llm, tool=get_weather), False))
    assert result.messages[-1].content == ANSWER  # AutoGen hands the error to the model
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "RuntimeError"


def test_the_recorded_conversation_is_restored_into_a_new_agent_that_continues_it(llm, checkpoint):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    asyncio.run(_run(_agent(llm), False))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "autogen"
    context = asyncio.run(agent.model_context.get_messages())
    assert [type(m) for m in context] == [
        UserMessage,
        AssistantMessage,
        FunctionExecutionResultMessage,
        AssistantMessage,
    ]
    assert context[1].content[0].id == context[2].content[0].call_id == "call_weather_1"
    assert context[2].content[0].content == TOOL_OUTPUT

    llm.reset()
    done = resume_and_continue(session, None, "And tomorrow?", agent)  # the server's default answer
    assert done.answer == "Hello! How can I help you today?"
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == QUESTION and sent[3]["tool_call_id"] == "call_weather_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert sent[4]["content"] == ANSWER and sent[-1]["content"] == "And tomorrow?"
