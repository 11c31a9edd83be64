"""smolagents runs (a ``ToolCallingAgent`` on its own ``OpenAIModel``) against the replay server:
one ``invoke_agent`` span per run, plain and streamed (``stream_outputs``, ``run(stream=True)``),
with the model calls and the tool calls (the model's call ids) under it, one trace, the session
id on every span, the conversation and a snapshot per model call in the session, what the server
saw matching what was recorded; and the recorded conversation restored into a new agent's memory
that continues it. A ``CodeAgent``'s code calls its tools itself (``Tool.__call__``, no call
ids): a span each all the same, under the run, model-replayed with the server stopped and the
tools answered from the recording."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

smolagents = pytest.importorskip("smolagents")

from opentelemetry.trace import StatusCode  # noqa: E402
from smolagents import CodeAgent, OpenAIModel, ToolCallingAgent, tool  # noqa: E402

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
        [
            ("chat gpt-4o-mini", []),
            ("execute_tool get_weather", []),
            ("chat gpt-4o-mini", []),
            ("execute_tool final_answer", []),  # a ToolCallingAgent answers through this tool
        ],
    )
]


@tool
def get_weather(city: str) -> str:
    """Weather of a city.

    Args:
        city: The city.
    """
    return f"18°C and sunny in {city}"


def _agent(llm: Any, stream: bool = False) -> ToolCallingAgent:
    model = OpenAIModel(
        model_id="gpt-4o-mini", api_base=llm.openai_url, api_key="sk-test", client_kwargs={"max_retries": 0}
    )
    return ToolCallingAgent(
        tools=[get_weather], model=model, name="weather", verbosity_level=0, stream_outputs=stream
    )


def _run(llm: Any, how: str) -> Any:
    streamed = how != "run"
    suffix = "_stream" if streamed else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final_answer_tool{suffix}")
    agent = _agent(llm, stream=streamed)
    if how == "run(stream=True)":
        steps: Any = agent.run(QUESTION, stream=True)  # a generator of steps, when streamed
        return list(steps)[-1].output
    return agent.run(QUESTION)


@pytest.mark.parametrize("how", ["run", "stream_outputs", "run(stream=True)"])
def test_one_agent_span_and_one_trace_per_run(how, llm, checkpoint, memory_exporter, capsys):
    assert _run(llm, how) == ANSWER
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
    assert run.attributes["gen_ai.agent.name"] == "weather"
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tools = {s.name: s for s in finished if s.name.startswith("execute_tool")}
    assert tools["execute_tool get_weather"].attributes["gen_ai.tool.call.id"] == "call_weather_1"
    assert tools["execute_tool final_answer"].attributes["gen_ai.tool.call.id"] == "call_final_1"
    assert tools["execute_tool get_weather"].attributes["gen_ai.tool.description"] == "Weather of a city."
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["agent_trace.tool_calls.ids"] for c in chats] == [
        ("call_weather_1",),
        ("call_final_1",),
    ]

    # what the server saw: the tool's result, after smolagents' "Calling tools" with the call id
    bodies = [r["body"] for r in llm.requests]
    assert len(bodies) == 2 and all(b.get("stream", False) is (how != "run") for b in bodies)
    sent = bodies[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "call_weather_1" in json.dumps(sent[2]) and TOOL_OUTPUT in json.dumps(sent[3], ensure_ascii=False)
    # ... is what the session holds as that call's input, with a snapshot per model call
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "user", "assistant"]
    assert json.dumps(recorded[3], ensure_ascii=False).count(TOOL_OUTPUT) == 1
    assert recorded[-1]["tool_calls"][0]["id"] == "call_final_1"
    snapshots = [e for e in session.events if e.type == "snapshot"]
    assert len(snapshots) == 3  # one per model call, one at the run's end
    model_class = type(
        OpenAIModel(model_id="gpt-4o-mini", api_key="sk-test")
    ).__name__  # 1.20: OpenAIServerModel
    info = {"type": model_class, "model_id": "gpt-4o-mini", "provider": "openai"}
    assert snapshots[-1].data["model_info"] == info
    spans_in_session = spans_of(checkpoint_file)
    run_entry = next(s for s in spans_in_session if s.name == "invoke_agent weather")
    assert run_entry.content["agent_input"] == QUESTION and run_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in spans_in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def test_a_tool_error_is_on_its_span_and_the_run_goes_on(llm, memory_exporter):
    @tool
    def get_weather(city: str) -> str:
        """Weather of a city.

        Args:
            city: The city.
        """
        raise RuntimeError("weather service down")

    model = OpenAIModel(model_id="gpt-4o-mini", api_base=llm.openai_url, api_key="sk-test")
    agent = ToolCallingAgent(tools=[get_weather], model=model, name="weather", verbosity_level=0)
    llm.queue("openai_chat_tool_call", "openai_chat_final_answer_tool")
    assert agent.run(QUESTION) == ANSWER  # smolagents hands the error to the model
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "AgentToolExecutionError"


def test_a_failed_run_ends_its_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_error_400")
    with pytest.raises(smolagents.utils.AgentGenerationError):
        _agent(llm).run(QUESTION)
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "AgentGenerationError"


def test_the_recorded_conversation_is_restored_into_a_new_agent_that_continues_it(llm, checkpoint):
    _run(llm, "run")
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "smolagents"
    assert restored.snapshot_id == 3  # the run's end: its final answer's result too
    (step,) = agent.memory.steps
    texts = [(m.role.value, cast(Any, m.content)[0]["text"]) for m in step.to_messages()]
    assert [role for role, _ in texts] == ["user", "assistant", "user", "assistant", "user"]
    assert texts[0][1] == f"New task:\n{QUESTION}" and "call_weather_1" in texts[1][1]
    assert texts[2][1] == f"Observation:\n{TOOL_OUTPUT}" and "call_final_1" in texts[3][1]
    assert texts[4][1] == f"Observation:\n{ANSWER}"

    llm.reset()
    llm.queue({"status": 200, "json": _final_answer("It will rain in Paris tomorrow.")})
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == "It will rain in Paris tomorrow."
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    text = json.dumps(sent, ensure_ascii=False)
    assert QUESTION in text and TOOL_OUTPUT in text and "call_weather_1" in text
    assert "New task:\nAnd tomorrow?" in sent[-1]["content"][-1]["text"]  # after the restored answer


def _final_answer(text: str) -> dict[str, Any]:
    from tests.fakes.llm_server import load_recording

    body = load_recording("openai_chat_final_answer_tool")["json"]
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json.dumps({"answer": text})
    return body


# A CodeAgent's model answers with code (smolagents' default ``<code>`` tags); the code calls the
# tools. Step 1 looks the weather up and prints it (the observation), step 2 answers.
CODE_STEPS = (
    'Thought: I look the weather up.\n<code>\nweather = get_weather(city="Paris")\nprint(weather)\n</code>',
    f'Thought: I have it.\n<code>\nfinal_answer("{ANSWER}")\n</code>',
)


def _code_reply(n: int, streamed: bool) -> dict[str, Any]:
    """The model's answer of step ``n`` as OpenAI's chat completions API sends it."""
    text = CODE_STEPS[n]
    head = {"id": f"chatcmpl-code{n + 1}", "created": 1764400000, "model": "gpt-4o-mini-2024-07-18"}
    usage = {"prompt_tokens": 900 + 100 * n, "completion_tokens": 20, "total_tokens": 920 + 100 * n}
    if not streamed:
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {
            "status": 200,
            "json": {**head, "object": "chat.completion", "choices": [choice], "usage": usage},
        }
    chunk = {**head, "object": "chat.completion.chunk"}
    deltas = [{"role": "assistant", "content": ""}, {"content": text[:20]}, {"content": text[20:]}]
    events = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    events.append({**chunk, "choices": [], "usage": usage})
    return {"status": 200, "sse": [{"event": None, "data": e} for e in [*events, "[DONE]"]]}


def _code_agent(base_url: str, calls: list[str], stream: bool = False) -> CodeAgent:
    @tool
    def get_weather(city: str) -> str:
        """Weather of a city.

        Args:
            city: The city.
        """
        calls.append(city)
        return f"18°C and sunny in {city}"

    model = OpenAIModel(
        model_id="gpt-4o-mini", api_base=f"{base_url}/v1", api_key="sk-test", client_kwargs={"max_retries": 0}
    )
    return CodeAgent(
        tools=[get_weather], model=model, name="weather", verbosity_level=0, stream_outputs=stream
    )


def _code_run(base_url: str, calls: list[str], how: str) -> Any:
    agent = _code_agent(base_url, calls, stream=how != "run")
    if how == "run(stream=True)":
        steps: Any = agent.run(QUESTION, stream=True)  # a generator of steps, when streamed
        return list(steps)[-1].output
    return agent.run(QUESTION)


@pytest.mark.parametrize("how", ["run", "stream_outputs", "run(stream=True)"])
def test_a_code_agents_tool_calls_are_spans_under_the_run_without_call_ids(
    how, llm, checkpoint, memory_exporter
):
    calls: list[str] = []
    streamed = how != "run"
    llm.queue(_code_reply(0, streamed), _code_reply(1, streamed))
    assert _code_run(llm.base_url, calls, how) == ANSWER and calls == ["Paris"]
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE  # the code's get_weather, then its final_answer, under the run
    run = next(s for s in finished if s.name == "invoke_agent weather")
    tools = {s.name: s for s in finished if s.name.startswith("execute_tool")}
    assert len(tools) == 2 and all(t.parent.span_id == run.context.span_id for t in tools.values())
    weather = tools["execute_tool get_weather"].attributes
    assert weather["gen_ai.tool.name"] == "get_weather" and weather["gen_ai.tool.type"] == "function"
    assert weather["gen_ai.tool.description"] == "Weather of a city."
    # code has no call ids: none on the tool spans (none made up), none listed by the model spans
    assert all("gen_ai.tool.call.id" not in t.attributes for t in tools.values())
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["gen_ai.response.id"] for c in chats] == ["chatcmpl-code1", "chatcmpl-code2"]
    assert all("agent_trace.tool_calls.ids" not in c.attributes for c in chats)

    # what the server saw: the code's printed result as the observation of the second call
    bodies = [r["body"] for r in llm.requests]
    assert len(bodies) == 2 and all(b.get("stream", False) is streamed for b in bodies)
    assert all("tools" not in b for b in bodies)  # the tools are in the prompt, as Python functions
    sent = [m["content"][0]["text"] for m in bodies[1]["messages"]]
    assert 'weather = get_weather(city="Paris")' in sent[2]
    assert sent[3].startswith(f"Observation:\nExecution logs:\n{TOOL_OUTPUT}\n")
    # ... what the session holds: the tools' arguments and results, the conversation, snapshots
    in_session = spans_of(checkpoint_file)
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT
    final = next(s for s in in_session if s.name == "execute_tool final_answer")
    assert final.content["tool_arguments"] == ANSWER and final.content["tool_result"] == ANSWER
    run_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert run_entry.content["agent_input"] == QUESTION and run_entry.content["agent_output"] == ANSWER
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "user", "assistant"]
    assert recorded[3]["content"][0]["text"] == sent[3]
    assert len([e for e in session.events if e.type == "snapshot"]) == 3  # per model call, the end


@pytest.mark.parametrize("how", ["run", "stream_outputs"])
def test_a_code_agent_run_replays_with_the_server_stopped_and_its_tools_answered(
    how, tmp_path, memory_exporter
):
    calls: list[str] = []
    streamed = how != "run"

    def run(base_url: str) -> Any:
        return _code_run(base_url, calls, how)

    script = (_code_reply(0, streamed), _code_reply(1, streamed))
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


def _texts(agent: Any) -> list[tuple[str, str]]:
    """The agent's memory as smolagents sends it to the model (system prompt left out)."""
    from smolagents.models import get_clean_message_list, tool_role_conversions

    messages = get_clean_message_list(agent.write_memory_to_messages(), tool_role_conversions)
    return [(str(m["role"].value), "".join(c["text"] for c in m["content"])) for m in messages[1:]]


def test_a_code_agents_recorded_conversation_is_restored_into_a_new_one_that_continues_it(llm, checkpoint):
    calls: list[str] = []
    llm.queue(_code_reply(0, False), _code_reply(1, False))
    original = _code_agent(llm.base_url, calls)
    assert original.run(QUESTION) == ANSWER
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _code_agent(llm.base_url, calls)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "smolagents" and restored.snapshot_id == 3
    texts = _texts(agent)
    assert [role for role, _ in texts] == ["user", "assistant", "user", "assistant", "user"]
    # the code steps as the first agent's memory gave them to its model (with smolagents' own
    # python_interpreter call ids), the code's printed output as the observation
    assert texts == _texts(original)
    assert "call_1" in texts[1][1] and texts[2][1].startswith(f"Observation:\nExecution logs:\n{TOOL_OUTPUT}")

    llm.reset()
    llm.queue({"status": 200, "json": _code_final("It will rain in Paris tomorrow.")})
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == "It will rain in Paris tomorrow." and calls == ["Paris"]
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"][0]["text"] == texts[1][1]
    assert sent[-1]["content"][-1]["text"].endswith("New task:\nAnd tomorrow?")  # after the restored answer


def _code_final(text: str) -> dict[str, Any]:
    body = _code_reply(1, False)["json"]
    body["choices"][0]["message"]["content"] = f'Thought: I know.\n<code>\nfinal_answer("{text}")\n</code>'
    return body
