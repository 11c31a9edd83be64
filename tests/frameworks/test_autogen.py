"""AutoGen (``autogen-agentchat``'s ``AssistantAgent`` on ``autogen-ext``'s
``OpenAIChatCompletionClient``) against the replay server. AutoGen emits its own GenAI spans
(``invoke_agent``, ``execute_tool`` with the call id, ``create_agent``): they are kept and
enriched, none doubled; the model calls (ours, from the openai client) are under AutoGen's agent
span, one trace per run, the session id on every span; the run's input and output and the tool's
arguments and result in the session; what the server saw matching what was recorded; and the
recorded conversation restored into a new agent's model context that continues it. A team
(``RoundRobinGroupChat``, ``SelectorGroupChat``) of two such agents: one trace per team run under
an ``invoke_workflow`` span of ours, each agent turn AutoGen's ``invoke_agent`` span with its model
and tool calls (the model's ids) under it, the session's messages and snapshots, and the run
model-replayed with the server stopped.

autogen-ext[openai] needs openai < 3: these run in a virtualenv of their own
(``python -m tests.services.frameworks2 run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.openai")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination  # noqa: E402
from autogen_agentchat.messages import ToolCallRequestEvent  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat, SelectorGroupChat  # noqa: E402
from autogen_core import SingleThreadedAgentRuntime  # noqa: E402
from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage, UserMessage  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.fakes.llm_server import load_recording  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

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


# A team of two agents with the tool: "weather" asks it for Paris (the model's call_weather_1)
# and answers; "checker" then asks it for Lyon (call_weather_2) and answers; the third chat
# message (the task is the first) ends the run.
LYON = "It is 18°C and sunny in Lyon too."
TEAM_OUTPUT = [
    ("user", "TextMessage"),
    ("weather", "ToolCallRequestEvent"),
    ("weather", "ToolCallExecutionEvent"),
    ("weather", "TextMessage"),
    ("checker", "ToolCallRequestEvent"),
    ("checker", "ToolCallExecutionEvent"),
    ("checker", "TextMessage"),
]
TEAM_NAMES = {"round_robin": "RoundRobinGroupChat", "selector": "SelectorGroupChat"}
TEAM_RUNS = [("round_robin", False), ("round_robin", True), ("selector", False)]


def _reply(name: str, response_id: str, **message: Any) -> dict[str, Any]:
    reply = load_recording(name)
    reply["json"]["id"] = response_id
    reply["json"]["choices"][0]["message"].update(message)
    return reply


def _team_script(kind: str) -> tuple[str | dict[str, Any], ...]:
    lyon_call = load_recording("openai_chat_tool_call")["json"]["choices"][0]["message"]["tool_calls"][0]
    lyon_call = {**lyon_call, "id": "call_weather_2"}
    lyon_call["function"] = {"name": "get_weather", "arguments": '{"city": "Lyon"}'}
    turns = (
        "openai_chat_tool_call",
        "openai_chat_final",
        _reply("openai_chat_tool_call", "chatcmpl-tool002", tool_calls=[lyon_call]),
        _reply("openai_chat_final", "chatcmpl-final02", content=LYON),
    )
    if kind == "selector":  # the selector's model picks the first speaker (the second is the only other)
        return (_reply("openai_chat_text", "chatcmpl-select1", content="weather"), *turns)
    return turns


def _team(kind: str, openai_url: str, runtime: Any = None) -> Any:
    def client() -> OpenAIChatCompletionClient:
        return OpenAIChatCompletionClient(
            model="gpt-4o-mini", base_url=openai_url, api_key="sk-test", max_retries=0
        )

    agents = [
        AssistantAgent(
            name,
            model_client=client(),
            tools=[get_weather],
            description=f"The {name} agent.",
            system_message=system,
            reflect_on_tool_use=True,
        )
        for name, system in (
            ("weather", "You answer weather questions."),
            ("checker", "You check the weather in another city."),
        )
    ]
    done = MaxMessageTermination(3)
    if kind == "selector":
        return SelectorGroupChat(agents, model_client=client(), termination_condition=done, runtime=runtime)
    return RoundRobinGroupChat(agents, termination_condition=done, runtime=runtime)


async def _run_team(team: Any, streamed: bool) -> Any:
    if not streamed:
        return await team.run(task=QUESTION)
    async for item in team.run_stream(task=QUESTION):
        last = item
    return last


def _genai_tree(spans: list[Any]) -> Any:
    """The tree of the agent, model and tool spans alone: each under its nearest such ancestor
    (AutoGen's runtime spans, ``autogen publish`` / ``autogen process``, sit between them)."""
    by_id = {s.span_id: s for s in spans}
    kept = [s for s in spans if s.name.startswith(("invoke_", "chat", "execute_tool"))]
    ids = {s.span_id for s in kept}

    def parent(span: Any) -> str | None:
        above = by_id.get(span.parent_span_id)
        while above is not None and above.span_id not in ids:
            above = by_id.get(above.parent_span_id)
        return None if above is None else above.span_id

    return tree(
        [
            SimpleNamespace(name=s.name, span_id=s.span_id, parent_span_id=parent(s), start_ns=s.start_ns)
            for s in kept
        ]
    )


@pytest.mark.parametrize(
    ("kind", "streamed"), TEAM_RUNS, ids=[f"{k}-{'run_stream' if s else 'run'}" for k, s in TEAM_RUNS]
)
def test_a_team_run_is_one_trace_each_agent_turn_under_it(kind, streamed, llm, checkpoint, memory_exporter):
    llm.queue(*_team_script(kind))
    result = asyncio.run(_run_team(_team(kind, llm.openai_url), streamed))
    assert [(m.source, type(m).__name__) for m in result.messages] == TEAM_OUTPUT
    assert result.messages[-1].content == LYON
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    team = TEAM_NAMES[kind]
    finished = [s for s in memory_exporter.get_finished_spans() if not s.name.startswith("create_agent")]
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    assert len({s.context.trace_id for s in finished}) == 1  # AutoGen alone: a trace per message
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == f"invoke_workflow {team}" and root.attributes["gen_ai.workflow.name"] == team
    turns = [s for s in finished if s.name.startswith("invoke_agent")]
    assert sorted(s.name for s in turns) == ["invoke_agent checker", "invoke_agent weather"]
    assert {s.instrumentation_scope.name for s in turns} == {"autogen-core"}  # AutoGen's, not doubled
    for turn in turns:
        assert turn.attributes["gen_ai.provider.name"] == "openai"
        assert turn.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    steps = [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])]
    selector = [("chat gpt-4o-mini", [])] if kind == "selector" else []
    expected = [*selector, ("invoke_agent weather", steps), ("invoke_agent checker", steps)]
    assert _genai_tree(spans_of(files[0])) == [(f"invoke_workflow {team}", expected)]

    # each tool call under its agent's turn, with the model's id
    by_id = {s.context.span_id: s for s in finished}

    def turn_of(span: Any) -> str:
        while not span.name.startswith("invoke_agent"):
            span = by_id[span.parent.span_id]
        return span.name

    tools = {turn_of(s): s for s in finished if s.name == "execute_tool get_weather"}
    assert {name: s.attributes["gen_ai.tool.call.id"] for name, s in tools.items()} == {
        "invoke_agent weather": "call_weather_1",
        "invoke_agent checker": "call_weather_2",
    }

    # what the server saw: the checker's model gets the task and the weather agent's answer
    sent = [r["body"]["messages"] for r in llm.requests[len(selector) :]]
    assert sent[1][-1]["tool_call_id"] == "call_weather_1" and sent[1][-1]["content"] == TOOL_OUTPUT
    assert [m["role"] for m in sent[2]] == ["system", "user", "user"]
    assert sent[2][1]["content"] == QUESTION and ANSWER in sent[2][2]["content"]
    assert sent[3][-1]["tool_call_id"] == "call_weather_2"
    assert sent[3][-1]["content"] == "18°C and sunny in Lyon"

    session = oat.load_session(checkpoint_file)
    assert len([e for e in session.events if e.type == "snapshot"]) == len(llm.requests)
    recorded = session.conversation()  # the last model call's: the checker's
    assert [m["role"] for m in recorded] == ["system", "user", "user", "assistant", "tool", "assistant"]
    assert recorded[4]["tool_call_id"] == "call_weather_2" and recorded[-1]["content"] == LYON
    in_session = spans_of(checkpoint_file)
    team_entry = next(s for s in in_session if s.name == f"invoke_workflow {team}")
    assert team_entry.content["agent_input"] == QUESTION and team_entry.content["agent_output"] == LYON
    outputs = {s.name: s.content["agent_output"] for s in in_session if s.name.startswith("invoke_agent")}
    assert outputs == {"invoke_agent weather": ANSWER, "invoke_agent checker": LYON}
    results = sorted(s.content["tool_result"] for s in in_session if s.name == "execute_tool get_weather")
    assert results == ["18°C and sunny in Lyon", TOOL_OUTPUT]


@pytest.mark.parametrize("kind", ["round_robin", "selector"])
def test_a_team_run_is_model_replayed_with_the_server_stopped(kind, tmp_path: Path):
    def run(base_url: str) -> dict[str, Any]:
        result = asyncio.run(_run_team(_team(kind, f"{base_url}/v1"), False))
        calls = [
            (message.source, call.id, call.name, json.loads(call.arguments))
            for message in result.messages
            if isinstance(message, ToolCallRequestEvent)
            for call in message.content
        ]
        return {"tool_calls": calls, "answer": result.messages[-1].content}

    script = _team_script(kind)
    recorded, replayed, report, path = record_then_replay(tmp_path, script, run)
    assert replayed == recorded
    assert recorded == {
        "tool_calls": [
            ("weather", "call_weather_1", "get_weather", {"city": "Paris"}),
            ("checker", "call_weather_2", "get_weather", {"city": "Lyon"}),
        ],
        "answer": LYON,
    }
    assert report["answered"] == len(script) and report["unused"] == 0
    assert report["divergences"] == [] and report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"] * len(script)


def test_a_failed_team_run_ends_its_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_error_400")  # the weather agent's second call fails
    with pytest.raises(RuntimeError) as raised:
        asyncio.run(_run_team(_team("round_robin", llm.openai_url), False))
    finished = memory_exporter.get_finished_spans()
    (team,) = [s for s in finished if s.name == "invoke_workflow RoundRobinGroupChat"]
    assert team.status.status_code is StatusCode.ERROR
    assert team.attributes["error.type"] == type(raised.value).__qualname__
    (turn,) = [s for s in finished if s.name == "invoke_agent weather"]
    assert turn.status.status_code is StatusCode.ERROR  # AutoGen's own span, as AutoGen ends it
    assert len({s.context.trace_id for s in finished if not s.name.startswith("create_agent")}) == 1


def test_a_team_on_a_runtime_started_by_the_user_is_in_the_context_it_was_started_in(llm, memory_exporter):
    """A runtime passed in (``runtime=``) and started before the run: its message loop keeps the
    context of ``runtime.start()``, where AutoGen makes the turns' spans; ours, current during the
    run only, cannot reach it. Started under a span, the turns are one trace under that span."""
    llm.queue(*_team_script("round_robin"))

    async def main() -> Any:
        runtime = SingleThreadedAgentRuntime()
        team = _team("round_robin", llm.openai_url, runtime)
        with trace.get_tracer("tests").start_as_current_span("my app"):
            runtime.start()
        result = await team.run(task=QUESTION)
        await runtime.stop_when_idle()
        return result

    assert asyncio.run(main()).messages[-1].content == LYON
    finished = memory_exporter.get_finished_spans()
    (app,) = [s for s in finished if s.name == "my app"]
    in_app = [s for s in finished if s.context.trace_id == app.context.trace_id]
    names = sorted(s.name for s in in_app if s.name.startswith(("invoke_", "chat", "execute_tool")))
    assert names == [
        *["chat gpt-4o-mini"] * 4,
        *["execute_tool get_weather"] * 2,
        "invoke_agent checker",
        "invoke_agent weather",
    ]
    (team,) = [s for s in finished if s.name == "invoke_workflow RoundRobinGroupChat"]
    assert team.context.trace_id != app.context.trace_id  # ours holds the team's sending only
