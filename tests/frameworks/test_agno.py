"""Agno runs (an ``Agent`` on its own ``OpenAIChat`` model) against the replay server: one
``invoke_agent`` span per run, ``run``/``arun``, plain and ``stream=True``, with the model calls
and the tool calls (the model's call ids) under it, one trace, the session id on every span, the
run's input and output, the tools' arguments and results and the conversation in the session,
what the server saw matching what was recorded; the recorded conversation restored as a new
agent's run input that continues it; a run model-replayed with the server stopped, its tool
answered from the recording; and nothing of Agno imported until the agent imports it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

agno = pytest.importorskip("agno")

from agno.agent import Agent  # noqa: E402
from agno.models.message import Message  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.run.agent import RunErrorEvent  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
SHAPE = [
    (
        "invoke_agent weather",
        [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
    )
]


@pytest.fixture(scope="module", autouse=True)
def _agno_instrumented(provider: Any) -> Iterator[None]:
    from otel_agent_trace.instrumentation.agno import AgnoInstrumentor

    inst = AgnoInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


def get_weather(city: str) -> str:
    """Weather of a city.

    Args:
        city: The city.
    """
    return f"18°C and sunny in {city}"


def _agent(base_url: str, tools: list[Any] | None = None) -> Agent:
    model = OpenAIChat(id="gpt-4o-mini", base_url=f"{base_url}/v1", api_key="sk-test", max_retries=0)
    return Agent(
        name="weather",
        model=model,
        tools=tools if tools is not None else [get_weather],
        instructions="You tell the weather.",
        telemetry=False,
    )


async def _arun(agent: Agent, streamed: bool) -> Any:
    if not streamed:
        return (await agent.arun(QUESTION)).content
    return "".join([e.content async for e in agent.arun(QUESTION, stream=True) if isinstance(e.content, str)])


def _run(base_url: str, how: str) -> Any:
    agent = _agent(base_url)
    if how == "run":
        return agent.run(QUESTION).content
    if how == "run(stream=True)":
        return "".join(e.content for e in agent.run(QUESTION, stream=True) if isinstance(e.content, str))
    return asyncio.run(_arun(agent, streamed=how != "arun"))


HOWS = ["run", "run(stream=True)", "arun", "arun(stream=True)"]


@pytest.mark.parametrize("how", HOWS)
def test_one_agent_span_and_one_trace_per_run(how, llm, checkpoint, memory_exporter):
    suffix = "_stream" if "stream" in how else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    assert _run(llm.base_url, how) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE
    run = next(s for s in finished if s.name == "invoke_agent weather")
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "weather"
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert run.status.status_code is StatusCode.UNSET
    (tool,) = [s for s in finished if s.name == "execute_tool get_weather"]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert tool.attributes["gen_ai.tool.description"] == "Weather of a city."
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)

    # what the server saw: the tool's result under the model's call id
    bodies = [r["body"] for r in llm.requests]
    assert len(bodies) == 2 and all(b.get("stream", False) is bool(suffix) for b in bodies)
    sent = bodies[1]["messages"]
    assert [m["role"] for m in sent] == ["developer", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "call_weather_1"
    assert sent[3] == {"role": "tool", "content": TOOL_OUTPUT, "tool_call_id": "call_weather_1"}
    # ... is what the session holds: the conversation, the run's input and output, the tool's
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["developer", "user", "assistant", "tool", "assistant"]
    assert recorded[2]["tool_calls"][0]["id"] == "call_weather_1"
    assert recorded[3]["tool_call_id"] == "call_weather_1" and recorded[3]["content"] == TOOL_OUTPUT
    assert recorded[-1]["content"] == ANSWER
    assert len([e for e in session.events if e.type == "snapshot"]) == 2  # one per model call
    in_session = spans_of(checkpoint_file)
    run_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert run_entry.content["agent_input"] == QUESTION and run_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def test_a_tool_error_is_on_its_span_and_the_run_goes_on(llm, memory_exporter):
    def get_weather(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    llm.queue("openai_chat_tool_call", "openai_chat_final")
    assert _agent(llm.base_url, [get_weather]).run(QUESTION).content == ANSWER  # the error goes to the model
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert "weather service down" in (span.status.description or "")
    assert "weather service down" in llm.requests[1]["body"]["messages"][-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_failed_run_ends_its_span_with_the_error(stream, llm, memory_exporter):
    llm.queue("openai_error_400")
    agent = _agent(llm.base_url)
    if stream:  # Agno does not raise: a streamed run ends with an error event
        (event,) = [e for e in agent.run(QUESTION, stream=True) if isinstance(e, RunErrorEvent)]
        error_type = event.error_type
    else:  # ... a run returns its output with the status ERROR
        assert agent.run(QUESTION).status.value == "ERROR"
        error_type = "RunError"
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == error_type
    assert "Invalid value for 'temperature'" in (span.status.description or "")


def test_the_recorded_conversation_is_restored_into_a_new_agent_that_continues_it(
    llm, checkpoint, session_dir
):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    _run(llm.base_url, "run")
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm.base_url)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "agno" and restored.snapshot_id == 2  # after the second model call
    messages = restored.restored
    assert all(isinstance(m, Message) for m in messages)
    # the agent's instructions are its own: the recorded ones (Agno's "developer" message) left out
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0].content == QUESTION
    assert messages[1].tool_calls[0]["id"] == "call_weather_1"
    assert messages[2].tool_call_id == "call_weather_1" and messages[2].content == TOOL_OUTPUT
    assert messages[2].tool_name == "get_weather" and messages[3].content == ANSWER

    llm.reset()
    llm.queue({"status": 200, "json": _final("It will rain in Paris tomorrow.")})
    with oat.session("resumed", directory=session_dir / "resumed", tier="checkpoint") as resumed:
        done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == "It will rain in Paris tomorrow."
    (request,) = llm.requests  # the resumed run's first request carries the restored conversation
    sent = request["body"]["messages"]
    assert [m["role"] for m in sent] == ["developer", "user", "assistant", "tool", "assistant", "user"]
    assert "You tell the weather." in sent[0]["content"]
    assert sent[1]["content"] == QUESTION and sent[2]["tool_calls"][0]["id"] == "call_weather_1"
    assert sent[3] == {"role": "tool", "content": TOOL_OUTPUT, "tool_call_id": "call_weather_1"}
    assert sent[4]["content"] == ANSWER and sent[5]["content"] == "And tomorrow?"
    # the resumed run's input in its session: the restored messages and the query, as chat messages
    (resumed_file,) = [p for p in resumed.files if "checkpoint" in p.name]
    run_entry = next(s for s in spans_of(resumed_file) if s.name == "invoke_agent weather")
    assert [m["role"] for m in run_entry.content["agent_input"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert run_entry.content["agent_input"][2] == {
        "role": "tool",
        "content": TOOL_OUTPUT,
        "tool_call_id": "call_weather_1",
    }


def _final(text: str) -> dict[str, Any]:
    from tests.fakes.llm_server import load_recording

    body = load_recording("openai_chat_final")["json"]
    body["choices"][0]["message"]["content"] = text
    return body


@pytest.mark.parametrize("how", ["run", "arun(stream=True)"])
def test_a_run_replays_with_the_server_stopped_and_its_tool_answered(how, tmp_path, memory_exporter):
    calls: list[str] = []

    def get_weather(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return f"18°C and sunny in {city}"

    def run(base_url: str) -> Any:
        agent = _agent(base_url, [get_weather])
        if how == "run":
            return agent.run(QUESTION).content
        return asyncio.run(_arun(agent, streamed=True))

    suffix = "_stream" if "stream" in how else ""
    script = (f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    recorded, replayed, report, path = record_then_replay(tmp_path, script, run)
    assert replayed == recorded == ANSWER
    assert calls == ["Paris"]  # run once, when recorded: the replay answered it from the recording
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"] * 2
    replayed_tools = [
        s for s in memory_exporter.get_finished_spans()
        if s.name == "execute_tool get_weather" and "agent_trace.replay.tool_result" in s.attributes
    ]  # fmt: skip
    assert [s.attributes["agent_trace.replay.tool_result"] for s in replayed_tools] == ["recorded"]
    assert replayed_tools[0].attributes["gen_ai.tool.call.id"] == "call_weather_1"


def test_nothing_of_agno_is_imported_until_the_agent_imports_it():
    code = (
        "import sys\n"
        "from otel_agent_trace.instrumentation.parts import load_part\n"
        "load_part('agent_trace_agno')().instrument()\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'agno'], 'agno imported at start-up'\n"
        "from agno.agent import Agent\n"
        "from agno.tools.function import FunctionCall\n"
        "print(hasattr(Agent.run, '__wrapped__'), hasattr(FunctionCall.execute, '__wrapped__'))\n"
        "assert 'agno.team.team' not in sys.modules\n"
        "from agno.team import Team\n"
        "print(hasattr(Team.run, '__wrapped__'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]  # agno.team's when it is imported


def _delegation(member_id: str, task: str) -> dict[str, Any]:
    from tests.fakes.llm_server import load_recording

    body = load_recording("openai_chat_tool_call")["json"]
    call = body["choices"][0]["message"]["tool_calls"][0]
    call["id"] = "call_delegate_1"
    call["function"] = {
        "name": "delegate_task_to_member",
        "arguments": json.dumps({"member_id": member_id, "task": task}),
    }
    return {"status": 200, "json": body}


@pytest.mark.parametrize("how", ["run", "arun"])
def test_a_teams_run_holds_its_members_run_under_the_delegation(how, llm, checkpoint, memory_exporter):
    from agno.team import Team

    model = OpenAIChat(id="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    team = Team(name="forecast", model=model, members=[_agent(llm.base_url)], telemetry=False)
    llm.queue(
        _delegation("weather", QUESTION),
        "openai_chat_tool_call",
        "openai_chat_final",
        {"status": 200, "json": _final("The weather agent says: " + ANSWER)},
    )
    output = team.run(QUESTION) if how == "run" else asyncio.run(team.arun(QUESTION))
    assert output.content == "The weather agent says: " + ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == [
        (
            "invoke_agent forecast",
            [
                ("chat gpt-4o-mini", []),
                ("execute_tool delegate_task_to_member", SHAPE),  # the member's run under it
                ("chat gpt-4o-mini", []),
            ],
        )
    ]
    team_span = next(s for s in finished if s.name == "invoke_agent forecast")
    assert team_span.attributes["gen_ai.provider.name"] == "openai"
    assert team_span.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tools = {s.name: s for s in finished if s.name.startswith("execute_tool")}
    assert (
        tools["execute_tool delegate_task_to_member"].attributes["gen_ai.tool.call.id"] == "call_delegate_1"
    )
    assert tools["execute_tool get_weather"].attributes["gen_ai.tool.call.id"] == "call_weather_1"
    in_session = {s.name: s for s in spans_of(checkpoint_file)}
    delegation = in_session["execute_tool delegate_task_to_member"].content
    assert delegation["tool_arguments"] == {"member_id": "weather", "task": QUESTION}
    assert ANSWER in delegation["tool_result"]  # the member's answer, as the leader's model got it
    assert ANSWER in json.dumps(llm.requests[3]["body"]["messages"][-1], ensure_ascii=False)
    assert in_session["invoke_agent weather"].content["agent_output"] == ANSWER
    assert in_session["invoke_agent forecast"].content["agent_input"] == QUESTION
