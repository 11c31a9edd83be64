"""AutoGen's other teams against the replay server, each a real ``autogen-agentchat`` team of
``AssistantAgent`` s on ``OpenAIChatCompletionClient``: a ``Swarm`` (a handoff is the model's
call of a ``transfer_to_…`` tool), a ``GraphFlow`` (``DiGraphBuilder``, one edge) and a
``MagenticOneGroupChat`` (an orchestrator's model calls around one agent's turn). Each run is one
trace under our ``invoke_workflow`` span, each agent's turn AutoGen's ``invoke_agent`` span with
its model and tool calls (the model's ids) under it, the handoff a tool call of the agent that hands
over; and each run model-replayed with the server stopped. A recorded ``RoundRobinGroupChat`` /
``SelectorGroupChat`` run restored into a new team (through AutoGen's ``save_state`` /
``load_state``) that continues it: the first request of the resumed team carries the agent's
restored conversation and the other agent's message since.

Run in the frameworks2 virtualenv (``autogen-ext[openai]`` needs openai < 3)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.openai")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination  # noqa: E402
from autogen_agentchat.messages import ToolCallRequestEvent  # noqa: E402
from autogen_agentchat.teams import DiGraphBuilder, GraphFlow, MagenticOneGroupChat, Swarm  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of  # noqa: E402
from tests.frameworks.test_autogen import (  # noqa: E402
    ANSWER,
    LYON,
    QUESTION,
    TOOL_OUTPUT,
    _genai_tree,
    _reply,
    _team,
    _team_script,
    get_weather,
)
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

HANDOFF = "Transferred to weather, adopting the role of weather immediately."
FINAL = "Paris: 18°C and sunny."
CHAT = ("chat gpt-4o-mini", [])
TURN = [CHAT, ("execute_tool get_weather", []), CHAT]


def _client(url: str) -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=url, api_key="sk-test", max_retries=0)


def _weather(
    url: str, name: str = "weather", system: str = "You answer weather questions."
) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=_client(url),
        tools=[get_weather],
        description=f"The {name} agent.",
        system_message=system,
        reflect_on_tool_use=True,
    )


def _ledger(done: bool) -> str:
    """The MagenticOne orchestrator's progress ledger, as its model answers it (JSON)."""
    answer = {"reason": "-", "answer": False}
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "-", "answer": done},
            "is_in_loop": answer,
            "is_progress_being_made": {"reason": "-", "answer": True},
            "next_speaker": {"reason": "-", "answer": "weather"},
            "instruction_or_question": {"reason": "-", "answer": "Tell the weather in Paris."},
        }
    )


def _text(name: str, content: str) -> dict[str, Any]:
    return _reply("openai_chat_text", f"chatcmpl-{name}", content=content)


# the server's answers, in order, and the team
SCRIPTS: dict[str, tuple[str | dict[str, Any], ...]] = {
    # triage hands over (call_handoff_1: transfer_to_weather), weather calls its tool and answers
    "swarm": ("openai_chat_handoff", "openai_chat_tool_call", "openai_chat_final"),
    # weather, then checker (the edge weather → checker), as the round robin team's
    "graph": _team_script("round_robin"),
    # the orchestrator's facts, plan and ledger; weather's turn; its ledger (done) and answer
    "magentic_one": (
        _text("facts", "Facts: none to look up."),
        _text("plan", "Plan: ask the weather agent."),
        _text("ledger1", _ledger(False)),
        "openai_chat_tool_call",
        "openai_chat_final",
        _text("ledger2", _ledger(True)),
        _text("answer", FINAL),
    ),
}
WORKFLOWS = {"swarm": "Swarm", "graph": "GraphFlow", "magentic_one": "MagenticOneGroupChat"}


def _other_team(kind: str, url: str) -> Any:
    if kind == "swarm":
        triage = AssistantAgent(
            "triage",
            model_client=_client(url),
            handoffs=["weather"],
            system_message="Hand weather questions to the weather agent.",
        )
        return Swarm([triage, _weather(url)], termination_condition=MaxMessageTermination(3))
    if kind == "graph":
        weather, checker = _weather(url), _weather(url, "checker", "You check the weather in another city.")
        builder = DiGraphBuilder()
        builder.add_node(weather).add_node(checker).add_edge(weather, checker)
        return GraphFlow([weather, checker], graph=builder.build())
    return MagenticOneGroupChat([_weather(url)], model_client=_client(url))


def _tools_by_turn(finished: list[Any]) -> dict[str, list[tuple[str, str]]]:
    """Each agent turn's tool calls (name, the model's call id)."""
    by_id = {s.context.span_id: s for s in finished}

    def turn_of(span: Any) -> str:
        while not span.name.startswith("invoke_agent"):
            span = by_id[span.parent.span_id]
        return span.name

    out: dict[str, list[tuple[str, str]]] = {}
    for s in sorted(finished, key=lambda s: s.start_time):
        if s.name.startswith("execute_tool"):
            out.setdefault(turn_of(s), []).append(
                (s.attributes["gen_ai.tool.name"], s.attributes["gen_ai.tool.call.id"])
            )
    return out


EXPECTED = {
    "swarm": {
        "messages": [
            ("user", "TextMessage"),
            ("triage", "ToolCallRequestEvent"),
            ("triage", "ToolCallExecutionEvent"),
            ("triage", "HandoffMessage"),
            ("weather", "ToolCallRequestEvent"),
            ("weather", "ToolCallExecutionEvent"),
            ("weather", "TextMessage"),
        ],
        "tree": [
            ("invoke_agent triage", [CHAT, ("execute_tool transfer_to_weather", [])]),
            ("invoke_agent weather", TURN),
        ],
        "tools": {
            "invoke_agent triage": [("transfer_to_weather", "call_handoff_1")],
            "invoke_agent weather": [("get_weather", "call_weather_1")],
        },
        "outputs": {"invoke_agent triage": HANDOFF, "invoke_agent weather": ANSWER},
        "answer": ANSWER,
    },
    "graph": {
        "messages": [
            ("user", "TextMessage"),
            ("weather", "ToolCallRequestEvent"),
            ("weather", "ToolCallExecutionEvent"),
            ("weather", "TextMessage"),
            ("checker", "ToolCallRequestEvent"),
            ("checker", "ToolCallExecutionEvent"),
            ("checker", "TextMessage"),
        ],
        "tree": [("invoke_agent weather", TURN), ("invoke_agent checker", TURN)],
        "tools": {
            "invoke_agent weather": [("get_weather", "call_weather_1")],
            "invoke_agent checker": [("get_weather", "call_weather_2")],
        },
        "outputs": {"invoke_agent weather": ANSWER, "invoke_agent checker": LYON},
        "answer": LYON,
    },
    "magentic_one": {
        "messages": [
            ("user", "TextMessage"),
            ("MagenticOneOrchestrator", "TextMessage"),  # the plan
            ("MagenticOneOrchestrator", "TextMessage"),  # the instruction to weather
            ("weather", "ToolCallRequestEvent"),
            ("weather", "ToolCallExecutionEvent"),
            ("weather", "TextMessage"),
            ("MagenticOneOrchestrator", "TextMessage"),  # the final answer
        ],
        # the orchestrator's calls are the team's, outside any agent's turn
        "tree": [CHAT, CHAT, CHAT, ("invoke_agent weather", TURN), CHAT, CHAT],
        "tools": {"invoke_agent weather": [("get_weather", "call_weather_1")]},
        "outputs": {"invoke_agent weather": ANSWER},
        "answer": FINAL,
    },
}
KINDS = list(SCRIPTS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_team_run_is_one_trace_each_agent_turn_under_it(kind, llm, checkpoint, memory_exporter):
    expected = EXPECTED[kind]
    llm.queue(*SCRIPTS[kind])
    result = asyncio.run(_other_team(kind, llm.openai_url).run(task=QUESTION))
    assert [(m.source, type(m).__name__) for m in result.messages] == expected["messages"]
    assert result.messages[-1].content == expected["answer"]
    assert len(llm.requests) == len(SCRIPTS[kind])
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    workflow = WORKFLOWS[kind]
    finished = [s for s in memory_exporter.get_finished_spans() if not s.name.startswith("create_agent")]
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    assert len({s.context.trace_id for s in finished}) == 1
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == f"invoke_workflow {workflow}" and root.attributes["gen_ai.workflow.name"] == workflow
    turns = [s for s in finished if s.name.startswith("invoke_agent")]
    assert {s.instrumentation_scope.name for s in turns} == {"autogen-core"}  # AutoGen's, not doubled
    assert _genai_tree(spans_of(files[0])) == [(f"invoke_workflow {workflow}", expected["tree"])]
    assert _tools_by_turn(finished) == expected["tools"]

    in_session = spans_of(checkpoint_file)
    team_entry = next(s for s in in_session if s.name == f"invoke_workflow {workflow}")
    assert team_entry.content["agent_input"] == QUESTION
    assert team_entry.content["agent_output"] == expected["answer"]
    outputs = {s.name: s.content["agent_output"] for s in in_session if s.name.startswith("invoke_agent")}
    assert outputs == expected["outputs"]
    session = oat.load_session(checkpoint_file)
    assert len([e for e in session.events if e.type == "snapshot"]) == len(SCRIPTS[kind])
    weather_tool = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert weather_tool.content["tool_arguments"] == {"city": "Paris"}
    assert weather_tool.content["tool_result"] == TOOL_OUTPUT


def test_a_swarm_handoff_is_the_tool_call_of_the_agent_that_hands_over(llm, checkpoint):
    """The handoff's tool call and result, in the session and in what the next agent's model got."""
    llm.queue(*SCRIPTS["swarm"])
    asyncio.run(_other_team("swarm", llm.openai_url).run(task=QUESTION))
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    handoff = next(s for s in spans_of(checkpoint_file) if s.name == "execute_tool transfer_to_weather")
    assert handoff.attributes["gen_ai.tool.call.id"] == "call_handoff_1"
    assert handoff.content["tool_result"] == HANDOFF
    # the weather agent's model sees the task and the handoff's message
    sent = llm.requests[1]["body"]["messages"]
    assert sent[0]["content"] == "You answer weather questions."
    assert sent[1]["content"] == QUESTION and sent[-1]["content"] == HANDOFF


@pytest.mark.parametrize("kind", KINDS)
def test_a_team_run_is_model_replayed_with_the_server_stopped(kind, tmp_path: Path):
    def run(base_url: str) -> dict[str, Any]:
        result = asyncio.run(_other_team(kind, f"{base_url}/v1").run(task=QUESTION))
        calls = [
            (message.source, call.id, call.name, json.loads(call.arguments))
            for message in result.messages
            if isinstance(message, ToolCallRequestEvent)
            for call in message.content
        ]
        return {"tool_calls": calls, "answer": result.messages[-1].content}

    script = SCRIPTS[kind]
    recorded, replayed, report, path = record_then_replay(tmp_path, script, run)
    assert replayed == recorded
    assert recorded["answer"] == EXPECTED[kind]["answer"]
    expected_calls = [
        (turn.removeprefix("invoke_agent "), call_id, name)
        for turn, calls in EXPECTED[kind]["tools"].items()
        for name, call_id in calls
    ]
    assert [call[:3] for call in recorded["tool_calls"]] == [(s, i, n) for s, i, n in expected_calls]
    assert report["answered"] == len(script) and report["unused"] == 0
    assert report["divergences"] == [] and report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"] * len(script)


NEXT = "And tomorrow?"
DEFAULT_ANSWER = "Hello! How can I help you today?"  # the server's answer with nothing queued


@pytest.mark.parametrize("kind", ["round_robin", "selector"])
def test_a_recorded_team_run_is_restored_into_a_new_team_that_continues_it(kind, llm, checkpoint):
    """The team's thread, each agent's model context and the messages of the others since its
    last turn, and who speaks next, written into a new team through AutoGen's state API."""
    llm.queue(*_team_script(kind))
    asyncio.run(_team(kind, llm.openai_url).run(task=QUESTION))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)

    team = _team(kind, llm.openai_url)
    restored = resume_from_snapshot(session, None, agent=team)
    assert restored.target == "autogen_team"
    assert restored.messages == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "name": "weather", "content": ANSWER},
        {"role": "assistant", "name": "checker", "content": LYON},
    ]
    state = asyncio.run(team.save_state())["agent_states"]
    manager = next(s for s in state.values() if "message_thread" in s)
    assert [(m["source"], m["content"]) for m in manager["message_thread"]] == [
        ("user", QUESTION),
        ("weather", ANSWER),
        ("checker", LYON),
    ]
    weather = state["weather"]
    assert [m["type"] for m in weather["agent_state"]["llm_context"]["messages"]] == [
        "UserMessage",
        "AssistantMessage",
        "FunctionExecutionResultMessage",
        "AssistantMessage",
    ]
    assert [(m["source"], m["content"]) for m in weather["message_buffer"]] == [("checker", LYON)]
    assert state["checker"]["message_buffer"] == []

    llm.reset()
    done = resume_and_continue(session, None, NEXT, _team(kind, llm.openai_url))
    assert [m.source for m in done.result.messages] == ["user", "weather", "checker"]
    assert done.answer == DEFAULT_ANSWER
    # no speaker selection: the selector's last speaker (checker) is restored, weather is the other
    first, second = (r["body"]["messages"] for r in llm.requests)
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool", "assistant", "user", "user"]
    assert first[0]["content"] == "You answer weather questions." and first[1]["content"] == QUESTION
    assert first[2]["tool_calls"][0]["id"] == first[3]["tool_call_id"] == "call_weather_1"
    assert first[3]["content"] == TOOL_OUTPUT and first[4]["content"] == ANSWER
    assert LYON in first[5]["content"] and first[6]["content"] == NEXT
    assert [m["role"] for m in second] == [
        *["system", "user", "user", "assistant", "tool", "assistant"],
        *["user", "user"],
    ]
    assert second[4]["tool_call_id"] == "call_weather_2" and second[5]["content"] == LYON
    assert second[6]["content"] == NEXT and DEFAULT_ANSWER in second[7]["content"]


def test_a_team_resumes_at_the_end_of_the_run_holding_the_snapshot(llm, checkpoint):
    """Two runs of a team recorded: snapshot 1 (the first run's first call) restores the first run
    whole; the latest, both runs' thread and each agent's conversation of the second."""

    async def two_runs() -> None:
        team = _team("round_robin", llm.openai_url)
        await team.run(task=QUESTION)
        await team.run(task=NEXT)  # the server's default answer, twice

    llm.queue(*_team_script("round_robin"))
    asyncio.run(two_runs())
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    first_run = [("user", QUESTION), ("weather", ANSWER), ("checker", LYON)]

    def thread(restored: Any) -> list[tuple[str, str]]:
        return [(m.get("name", m["role"]), m["content"]) for m in restored.messages]

    early = resume_from_snapshot(session, 1, agent=_team("round_robin", llm.openai_url))
    assert thread(early) == first_run

    team = _team("round_robin", llm.openai_url)
    latest = resume_from_snapshot(session, None, agent=team)
    assert thread(latest) == [
        *first_run,
        ("user", NEXT),
        ("weather", DEFAULT_ANSWER),
        ("checker", DEFAULT_ANSWER),
    ]
    context = asyncio.run(team.save_state())["agent_states"]["weather"]["agent_state"]["llm_context"]
    assert [m["content"] for m in context["messages"]][-3:] == [LYON, NEXT, DEFAULT_ANSWER]


def test_a_recorded_swarm_run_is_restored_the_agent_handed_to_speaks_next(llm, checkpoint):
    """The triage agent's handoff (its call and the result) in its restored context; weather, the
    agent the run ended with, speaks first in the resumed swarm, with its own conversation."""
    llm.queue(*SCRIPTS["swarm"])
    asyncio.run(_other_team("swarm", llm.openai_url).run(task=QUESTION))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)

    team = _other_team("swarm", llm.openai_url)
    restored = resume_from_snapshot(session, None, agent=team)
    assert [(m.get("name", m["role"]), m["content"]) for m in restored.messages] == [
        ("user", QUESTION),
        ("triage", HANDOFF),
        ("weather", ANSWER),
    ]
    state = asyncio.run(team.save_state())["agent_states"]
    triage = state["triage"]["agent_state"]["llm_context"]["messages"]
    types = ["UserMessage", "AssistantMessage", "FunctionExecutionResultMessage"]
    assert [m["type"] for m in triage] == types
    assert triage[1]["content"][0]["id"] == triage[2]["content"][0]["call_id"] == "call_handoff_1"
    assert triage[2]["content"][0]["content"] == HANDOFF
    assert [(m["source"], m["content"]) for m in state["triage"]["message_buffer"]] == [("weather", ANSWER)]

    llm.reset()
    done = resume_and_continue(session, None, NEXT, _other_team("swarm", llm.openai_url))
    assert [m.source for m in done.result.messages] == ["user", "weather", "weather"]
    sent = llm.requests[0]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "tool", "assistant", "user"]
    assert sent[0]["content"] == "You answer weather questions."
    assert sent[1]["content"] == QUESTION and sent[2]["content"] == HANDOFF
    assert sent[3]["tool_calls"][0]["id"] == sent[4]["tool_call_id"] == "call_weather_1"
    assert sent[5]["content"] == ANSWER and sent[6]["content"] == NEXT
