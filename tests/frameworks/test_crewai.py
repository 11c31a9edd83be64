"""CrewAI (a crew of one agent with a tool, and an agent's own ``kickoff``) on its native OpenAI
provider against the replay server: one ``invoke_workflow`` span per crew run with the agent's
``invoke_agent`` span, its model calls and its tool call (the model's call id) under it, one
trace, the session id on every span, the conversation and a snapshot per model call in the
session, what the server saw matching what was recorded; a failing tool on its span; the same
for a tool call the model writes as ReAct text (``Action:`` / ``Action Input:``), the path CrewAI
takes for a model without native function calling (sync and async, ``ToolUsage.ause`` included),
replayed in process with the server stopped and its tool answered from the recording; and the
recorded conversation (native and ReAct) handed back to an agent's ``kickoff`` that continues it.

CrewAI pins versions the main test environment does not have (openai < 3, its own mcp, pydantic):
these run in a virtualenv of their own (``python -m tests.services.crewai_venv run``, a step of
.ci/run)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

pytest.importorskip("crewai")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # it would send to CrewAI
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.fakes.llm_server import load_recording  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
AGENT = (
    "invoke_agent weather",
    [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
)


@tool("get_weather")
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm: Any, weather: Any = get_weather, model: str = "openai/gpt-4o-mini") -> Agent:
    model = LLM(model=model, base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    return Agent(
        role="weather",
        goal="Answer weather questions",
        backstory="You know the weather.",
        tools=[weather],
        llm=model,
        verbose=False,
    )


def _crew(agent: Agent) -> Crew:
    task = Task(description=QUESTION, expected_output="The weather.", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False)


def test_a_crew_run_is_one_tree_and_one_trace(llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    assert str(_crew(_agent(llm)).kickoff()) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == [("invoke_workflow crew", [AGENT])]
    run = next(s for s in finished if s.name == "invoke_agent weather")
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tool_span = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert tool_span.attributes["gen_ai.tool.description"] == "Weather of a city."
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["gen_ai.response.id"] for c in chats] == ["chatcmpl-tool001", "chatcmpl-final01"]

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
    agent_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert agent_entry.content["agent_input"] == QUESTION and agent_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def test_an_agents_own_kickoff_is_one_agent_span(llm, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    assert _agent(llm).kickoff(QUESTION).raw == ANSWER
    finished = memory_exporter.get_finished_spans()
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == "invoke_agent weather"
    assert len({s.context.trace_id for s in finished}) == 1
    assert sorted(
        s.name for s in finished if s.parent is not None and s.parent.span_id == root.context.span_id
    ) == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "execute_tool get_weather",
    ]


def test_a_failing_tool_is_on_its_span_and_the_run_goes_on(llm, memory_exporter):
    @tool("get_weather")
    def broken(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    llm.queue("openai_chat_tool_call", "openai_chat_final")
    assert str(_crew(_agent(llm, broken)).kickoff()) == ANSWER  # CrewAI hands the error to the model
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "tool_error"
    assert "weather service down" in llm.requests[1]["body"]["messages"][3]["content"]


def test_a_failed_run_ends_its_spans_with_the_error(llm, memory_exporter):
    llm.queue(*["openai_error_400"] * 10)  # CrewAI tries the call again
    with pytest.raises(Exception) as raised:
        _crew(_agent(llm)).kickoff()
    by_name = {s.name: s for s in memory_exporter.get_finished_spans()}
    for name in ("invoke_workflow crew", "invoke_agent weather"):
        assert by_name[name].status.status_code is StatusCode.ERROR
    assert by_name["invoke_workflow crew"].attributes["error.type"] == type(raised.value).__qualname__


def test_the_recorded_conversation_is_handed_to_kickoff_that_continues_it(llm, checkpoint):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    _crew(_agent(llm)).kickoff()
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "crewai"
    assert [m["role"] for m in restored.restored] == ["user", "assistant", "tool", "assistant"]

    llm.reset()
    done = resume_and_continue(session, None, "And tomorrow?", agent)  # the server's default answer
    assert done.answer == "Hello! How can I help you today?"
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert QUESTION in sent[1]["content"] and sent[3]["tool_call_id"] == "call_weather_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert sent[4]["content"] == ANSWER and "And tomorrow?" in sent[-1]["content"]


# ReAct: the model writes its tool call as text, CrewAI parses and runs it, and hands the result
# back as the "Observation" in the model's own message
REACT_CALL = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris"}'
REACT_FINAL = f"Thought: I now know the final answer\nFinal Answer: {ANSWER}"
# what Ollama answers for a model without tool support (CrewAI then goes on in text mode)
TOOLS_REFUSED = {
    "status": 400,
    "json": {
        "error": {
            "message": "registry.ollama.ai/library/gemma3:1b does not support tools",
            "type": "api_error",
        }
    },
}
# the two ways into the ReAct path: the model has no function calling (CrewAI's
# ``supports_function_calling()`` is false for an o1 model), or the provider refuses the tools
REACT = {"no_function_calling": ("o1-mini", ()), "tools_refused": ("gpt-4o-mini", (TOOLS_REFUSED,))}


def _text_reply(content: str, response_id: str) -> dict[str, Any]:
    reply = load_recording("openai_chat_final")
    reply["json"]["id"] = response_id
    reply["json"]["choices"][0]["message"]["content"] = content
    return reply


def _react_script(path: str) -> tuple[dict[str, Any], ...]:
    return (
        *REACT[path][1],
        _text_reply(REACT_CALL, "chatcmpl-react01"),
        _text_reply(REACT_FINAL, "chatcmpl-react02"),
    )


@pytest.mark.parametrize("path", list(REACT))
def test_a_react_tool_call_is_a_tool_span_under_the_agent(path, llm, checkpoint, memory_exporter):
    model, refused = REACT[path]
    llm.queue(*_react_script(path))
    agent = _agent(llm, model=f"openai/{model}")
    assert agent.llm.supports_function_calling() is not (path == "no_function_calling")
    assert str(_crew(agent).kickoff()) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    # the server saw the ReAct exchange: no tools sent (after a refusal), the model's Action, and
    # the tool's result handed back as the Observation in the model's message
    sent = [r["body"] for r in llm.requests]
    assert len(sent) == len(refused) + 2
    assert all("tools" not in body for body in sent[len(refused) :])
    action = sent[-1]["messages"][-2]
    assert action["role"] == "assistant"
    assert action["content"] == f"{REACT_CALL}\nObservation: {TOOL_OUTPUT}"

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    chat = (f"chat {model}", [])
    steps = [chat] * (len(refused) + 1) + [("execute_tool get_weather", []), chat]
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == [("invoke_workflow crew", [("invoke_agent weather", steps)])]
    (tool_span,) = [s for s in finished if s.name == "execute_tool get_weather"]
    assert "gen_ai.tool.call.id" not in tool_span.attributes  # the model gave none
    assert tool_span.attributes["gen_ai.tool.description"] == "Weather of a city."
    assert tool_span.status.status_code is StatusCode.UNSET
    chats = [s for s in finished if s.name == f"chat {model}"]
    assert [c.attributes.get("gen_ai.response.id") for c in chats[len(refused) :]] == [
        "chatcmpl-react01",
        "chatcmpl-react02",
    ]

    in_session = spans_of(checkpoint_file)
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["content"] for m in recorded] == [m["content"] for m in sent[-1]["messages"]] + [REACT_FINAL]
    assert len([e for e in session.events if e.type == "snapshot"]) == 2


def test_a_failing_react_tool_is_on_its_span_and_the_run_goes_on(llm, checkpoint, memory_exporter):
    runs = []

    @tool("get_weather")
    def broken(city: str) -> str:
        """Weather of a city."""
        runs.append(city)
        raise RuntimeError("weather service down")

    llm.queue(*_react_script("no_function_calling"))
    assert str(_crew(_agent(llm, broken, model="openai/o1-mini")).kickoff()) == ANSWER
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    # CrewAI runs a failing tool again (1.15.30: six times, ToolUsage calling itself), then hands
    # the error to the model: one span for the one call the model asked for
    assert len(runs) > 1 and set(runs) == {"Paris"}
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "tool_error"
    observation = llm.requests[1]["body"]["messages"][-2]["content"]
    assert "weather service down" in observation
    tool_entry = next(s for s in spans_of(checkpoint_file) if s.name == "execute_tool get_weather")
    assert observation.endswith(tool_entry.content["tool_result"])


def test_a_text_tool_call_crewai_does_not_run_has_no_span(llm, memory_exporter):
    """A tool the model names but the agent does not have: CrewAI answers with an error text and
    runs nothing (``ToolUsage.use`` is not reached), so there is no tool span to make."""
    llm.queue(
        _text_reply(REACT_CALL.replace("get_weather", "get_forecast"), "chatcmpl-react01"),
        _text_reply(REACT_FINAL, "chatcmpl-react02"),
    )
    assert str(_crew(_agent(llm, model="openai/o1-mini")).kickoff()) == ANSWER
    names = [s.name for s in memory_exporter.get_finished_spans()]
    assert not [n for n in names if n.startswith("execute_tool")]
    assert "get_forecast" in llm.requests[1]["body"]["messages"][-2]["content"]


def _react_crew(base_url: str, runs: list[str], model: str = "o1-mini") -> Crew:
    """A crew whose agent's model has no function calling (an o1 model: ReAct), its tool counting
    its runs."""

    @tool("get_weather")
    def counted(city: str) -> str:
        """Weather of a city."""
        runs.append(city)
        return f"18°C and sunny in {city}"

    llm = LLM(model=f"openai/{model}", base_url=base_url, api_key="sk-test", max_retries=0)
    agent = Agent(
        role="weather",
        goal="Answer weather questions",
        backstory="You know the weather.",
        tools=[counted],
        llm=llm,
        verbose=False,
    )
    return _crew(agent)


def _trees(finished: list[Any]) -> list[Any]:
    """Each trace's span tree (names, children in start order), traces in start order; the
    system layer's spans left out."""
    spans = [s for s in finished if not s.name.startswith(("POST", "GET"))]

    def children(parent: Any) -> list[Any]:
        kids = [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]
        return [(s.name, children(s)) for s in sorted(kids, key=lambda s: (s.start_time, s.name))]

    roots = sorted((s for s in spans if s.parent is None), key=lambda s: s.start_time)
    return [[(r.name, children(r))] for r in roots]


def _react_tree(path: str = "no_function_calling") -> list[Any]:
    """A ReAct crew run's spans: the model call refused its tools (if it was), the one that wrote
    the Action, the tool call, the one that answered."""
    model, refused = REACT[path]
    chat = (f"chat {model}", [])
    steps = [chat] * (len(refused) + 1) + [("execute_tool get_weather", []), chat]
    return [("invoke_workflow crew", [("invoke_agent weather", steps)])]


REACT_TREE = _react_tree()


@pytest.mark.parametrize("how", ["kickoff", "akickoff"])
@pytest.mark.parametrize("path", list(REACT))
def test_a_react_run_replays_with_the_server_stopped_and_its_tool_answered(
    path, how, tmp_path, memory_exporter
):
    """Model replay of a ReAct run (in process, the model server stopped): the same answer and
    tool spans, the tool call answered from the recording (not run again), every exchange used
    (a provider's refusal of the tools too)."""
    import asyncio

    from tests.genai.replay_helpers import record_then_replay

    runs: list[str] = []

    def run(base_url: str) -> str:
        crew = _react_crew(base_url, runs, REACT[path][0])
        return str(crew.kickoff() if how == "kickoff" else asyncio.run(crew.akickoff()))

    script = _react_script(path)
    recorded, replayed, report, recorded_file = record_then_replay(tmp_path, script, run)
    assert replayed == recorded == ANSWER
    assert runs == ["Paris"]  # run once, when recorded: the replay answered it from the recording
    assert report["divergences"] == [] and report["refused"] == []
    assert report["answered"] == report["recorded_exchanges"] == len(script) and report["unused"] == 0

    finished = memory_exporter.get_finished_spans()
    # the recorded run's tree, then the replay's under the replay's own span
    assert _trees(finished) == [_react_tree(path), [("model_replay", _react_tree(path))]]
    first, second = [s for s in finished if s.name == "execute_tool get_weather"]
    assert "agent_trace.replay.tool_result" not in first.attributes
    assert second.attributes["agent_trace.replay.tool_result"] == "recorded"
    assert "gen_ai.tool.call.id" not in second.attributes
    tool_entry = next(s for s in spans_of(recorded_file) if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


@pytest.mark.parametrize("how", ["crew_akickoff", "agent_kickoff_async"])
async def test_an_async_react_tool_call_is_a_tool_span_under_the_agent(how, llm, checkpoint, memory_exporter):
    """An async crew or agent in ReAct mode: its tool call under its agent span (CrewAI 1.15.30
    runs it through ``ToolUsage.use`` on this path too; ``ause``: below)."""
    runs: list[str] = []
    llm.queue(*_react_script("no_function_calling"))
    crew = _react_crew(llm.openai_url, runs)
    if how == "crew_akickoff":
        assert str(await crew.akickoff()) == ANSWER
    else:
        assert (await crew.agents[0].kickoff_async(QUESTION)).raw == ANSWER
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert runs == ["Paris"]
    action = llm.requests[-1]["body"]["messages"][-2]
    assert action["content"] == f"{REACT_CALL}\nObservation: {TOOL_OUTPUT}"

    agent_tree = REACT_TREE[0][1]
    assert _trees(memory_exporter.get_finished_spans()) == [
        REACT_TREE if how == "crew_akickoff" else agent_tree
    ]
    (tool_span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert tool_span.attributes["gen_ai.tool.description"] == "Weather of a city."
    assert "gen_ai.tool.call.id" not in tool_span.attributes
    tool_entry = next(s for s in spans_of(checkpoint_file) if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


async def test_crewais_async_tool_usage_is_a_tool_span(checkpoint, memory_exporter):
    """``ToolUsage.ause``, CrewAI's async run of a ReAct tool call, driven by CrewAI's own
    ``aexecute_tool_and_check_finality`` with the model's text parsed by CrewAI (1.15.30's
    agents run their ReAct tool calls synchronously even in ``akickoff``, above: this is the
    async path as CrewAI exposes it)."""
    from crewai.agents.parser import parse
    from crewai.utilities.tool_utils import aexecute_tool_and_check_finality

    runs: list[str] = []
    weather = (_react_crew("http://127.0.0.1:9", runs).agents[0].tools or [])[0]  # (no model call)
    action = parse(REACT_CALL)
    done = await aexecute_tool_and_check_finality(action, [weather.to_structured_tool()])
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    assert runs == ["Paris"] and done.result == TOOL_OUTPUT
    (tool_span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert tool_span.attributes["gen_ai.tool.description"] == "Weather of a city."
    assert tool_span.status.status_code is StatusCode.UNSET
    tool_entry = next(s for s in spans_of(checkpoint_file) if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


@pytest.mark.parametrize("path", list(REACT))
def test_a_react_runs_recorded_conversation_is_handed_to_kickoff_that_continues_it(path, llm, checkpoint):
    """A ReAct run resumed into a new agent: the conversation as its model saw it (the Action and
    its Observation in the model's own message), the agent's prompt left to the new agent (for
    an o1 model CrewAI sends it as a ``System: …`` user message), the run continued."""
    model, refused = REACT[path]
    runs: list[str] = []
    llm.queue(*_react_script(path))
    assert str(_react_crew(llm.openai_url, runs, model).kickoff()) == ANSWER
    sent = llm.requests[-1]["body"]["messages"]
    recorded_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(recorded_file)
    agent = _react_crew(llm.openai_url, runs, model).agents[0]
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "crewai"
    # what the model saw after the agent's prompt (the task; after a refusal, CrewAI's switch to
    # text; the Action with its Observation; CrewAI's nudge), then the final answer
    prompt, *seen = sent
    assert [m["content"] for m in restored.restored] == [m["content"] for m in seen] + [REACT_FINAL]
    assert [m["role"] for m in restored.restored][-3:] == ["assistant", "user", "assistant"]
    assert restored.restored[-3]["content"] == f"{REACT_CALL}\nObservation: {TOOL_OUTPUT}"

    llm.reset()
    tomorrow = "It will rain in Paris tomorrow."
    llm.queue(*refused, _text_reply(f"Thought: I know it.\nFinal Answer: {tomorrow}", "chatcmpl-react03"))
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == tomorrow
    assert runs == ["Paris"]  # the tool ran once, in the first run
    again = [m["content"] for m in llm.requests[-1]["body"]["messages"]]
    # the new agent's prompt once, the recorded turns, the new task
    assert again.count(prompt["content"]) == 1 and again[0] == prompt["content"]
    assert again[1 : len(restored.restored) + 1] == [m["content"] for m in restored.restored]
    assert "And tomorrow?" in again[len(restored.restored) + 1]


# a ReAct crew as a script of its own, for `otel-agent-trace replay --model-replay`: its tool
# writes a line per run to runs.txt
REACT_SCRIPT = """
import json, os
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool

@tool("get_weather")
def get_weather(city: str) -> str:
    \"\"\"Weather of a city.\"\"\"
    with open("runs.txt", "a", encoding="utf-8") as f:
        f.write(city + "\\n")
    return f"18°C and sunny in {city}"

llm = LLM(
    model="openai/o1-mini",
    base_url=os.environ["OPENAI_BASE_URL"],
    api_key=os.environ["OPENAI_API_KEY"],
    max_retries=0,
)
agent = Agent(
    role="weather",
    goal="Answer weather questions",
    backstory="You know the weather.",
    tools=[get_weather],
    llm=llm,
)
task = Task(description="What's the weather in Paris?", expected_output="The weather.", agent=agent)
print(json.dumps({"answer": Crew(agents=[agent], tasks=[task]).kickoff().raw}, ensure_ascii=False))
"""


def test_a_react_run_recorded_under_opentelemetry_instrument_is_replayed_by_the_cli(tmp_path):
    """Recorded under ``opentelemetry-instrument``, replayed by ``otel-agent-trace replay
    --model-replay`` with the server stopped: the same answer, the tool not run again."""
    from tests.model_replay.conftest import SCRIPTS, agent_output, record, replay

    scripts: dict[Any, Any] = SCRIPTS  # (the model server's script: answers as dicts here)
    scripts.setdefault(("crewai-react", False), _react_script("no_function_calling"))
    script = tmp_path / "react_crew.py"
    script.write_text(REACT_SCRIPT, encoding="utf-8")
    recorded = record(script, tmp_path / "run", provider="crewai-react")
    assert json.loads(recorded.output) == {"answer": ANSWER}
    runs = recorded.cwd / "runs.txt"
    assert runs.read_text(encoding="utf-8") == "Paris\n"
    tool_entry = next(s for s in spans_of(recorded.session) if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT

    done, report = replay(recorded)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    assert runs.read_text(encoding="utf-8") == "Paris\n"  # answered from the recording
    assert report["divergences"] == [] and report["refused"] == []
    assert report["answered"] == report["recorded_exchanges"] == 2 and report["unused"] == 0
