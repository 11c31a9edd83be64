"""Resume at EVERY entry of a real recorded run of each framework — LangGraph (langchain-openai), the
OpenAI Agents SDK and Strands (its OpenAI provider), each a weather agent that calls a tool — and
let the framework itself judge the restored history: LangGraph refuses a tool call without its
ToolMessage (INVALID_CHAT_HISTORY), the Agents SDK would send a dangling tool call, Strands would
inject a failed tool result ("Tool was interrupted."). Each restored history is the conversation
exactly as it stood at that entry (the tool result a tool span recorded before any message held it
included), or cut back to the last complete turn, said so; ``fork`` calls an entry resumable
exactly where resume gives a history.

Each run is recorded once; the history at every entry is restored in-process, and each framework
runs once on each distinct history, against the local fake model server."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.fork import fork_session
from otel_agent_trace.offline.resume import ResumeError, resume_and_continue, resume_from_snapshot, to_openai
from tests.e2e.helpers import run_instrumented

from .conftest import EXAMPLES, REPO, cli

MODEL_EXAMPLES = REPO / "examples" / "model_replay"
HELLO = "Hello! How can I help you today?"
INTERRUPTED = "Tool was interrupted."


def _example(path: Path):
    spec = importlib.util.spec_from_file_location(f"every_entry_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def agents_sdk_run(tmp_path_factory, llm):
    """``examples/model_replay/agents_sdk_weather.py`` (a ``@function_tool`` over an ``@oat.tool``)
    recorded in the checkpoint tier."""
    cwd = tmp_path_factory.mktemp("agents_sdk")
    shutil.copy(MODEL_EXAMPLES / "agents_sdk_weather.py", cwd / "agents_sdk_weather.py")
    (cwd / "weather.json").write_text(json.dumps({"Paris": {"temp_c": 18, "sky": "sunny"}}))
    llm.reset()
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    env = {"AGENT_TRACE_TIER": "checkpoint", "OPENAI_BASE_URL": llm.openai_url, "OPENAI_API_KEY": "sk-test"}
    done = run_instrumented(cwd / "agents_sdk_weather.py", cwd, env)
    assert done.returncode == 0, done.stderr
    (path,) = (cwd / "agent-sessions").glob("*.checkpoint.jsonl")
    return path


def _unanswered(sent: list[dict]) -> list[str]:
    """Tool calls in a chat-completions request with no tool message answering them."""
    answered = {m.get("tool_call_id") for m in sent if m.get("role") == "tool"}
    return [
        c["id"]
        for m in sent
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or ()
        if c["id"] not in answered
    ]


def _texts(messages: list[dict]) -> list[str]:
    return [m.get("content") or "" for m in messages]


def _histories(session, tmp_path) -> dict[str, str]:
    """Resume at every entry (no agent: the history only) and fork there: ``fork`` says resumable
    exactly where resume restores a history, and every history is the recorded conversation up to
    that point (never a message the run did not have, every tool call answered). The distinct
    histories, each with the first entry that gives it."""
    final = to_openai(resume_from_snapshot(session, at=session.events[-1].id).messages)
    assert _unanswered(final) == [] and final[-1] == {
        "role": "assistant",
        "content": "It is 18°C and sunny in Paris.",
    }
    distinct: dict[str, str] = {}
    for n, event in enumerate(session.events):
        fork = fork_session(session, event.id, tmp_path / f"fork-{n}.checkpoint.jsonl")
        try:
            restored = resume_from_snapshot(session, at=event.id)
        except ResumeError as exc:
            assert not fork.resumable, (event.id, fork.reason)
            assert "no conversation" in str(exc)
            continue
        assert fork.resumable, (event.id, fork.reason)
        history = to_openai(restored.messages)
        assert history == final[: len(history)], event.id  # as it stood: a prefix of the whole run
        assert _unanswered(history) == [], event.id
        assert (restored.cut is None) == (fork.cut is None)
        if restored.cut:
            assert restored.cut.startswith("cut back to the last complete turn")
            assert "get_weather (call_weather_1) has no result" in restored.cut
        distinct.setdefault(json.dumps(history), event.id)
    return distinct


def _tool_answered_from_its_span(session, distinct):
    """The history right after the tool returned holds its result, before any message did."""
    tool_end = next(
        e.id
        for e in session.events
        if e.type == "span.end" and (e.data.get("content") or {}).get("tool_result") is not None
        and (e.data.get("attributes") or {}).get("gen_ai.tool.call.id")
    )  # fmt: skip
    restored = resume_from_snapshot(session, at=tool_end)
    assert restored.cut is None and to_openai(restored.messages)[-1]["role"] == "tool"
    assert any(json.loads(h)[-1]["role"] == "tool" for h in distinct)
    return tool_end


def test_langgraph_resumes_at_every_entry(langgraph_run, llm, monkeypatch, tmp_path):
    from langchain_core.messages import AIMessage, ToolMessage

    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    session = load_session(langgraph_run.checkpoint)
    distinct = _histories(session, tmp_path)
    _tool_answered_from_its_span(session, distinct)
    assert len(distinct) == 3  # the question; the question, the call and its result; the answer
    graph_module = _example(EXAMPLES / "langgraph_agent.py")
    for history, entry in distinct.items():
        llm.reset()
        llm.queue("openai_chat_text")
        done = resume_and_continue(session, None, "And tomorrow?", graph_module.make_graph(), at=entry)
        assert done.answer == HELLO
        sent = llm.requests[-1]["body"]["messages"]
        assert len(llm.requests) == 1 and _unanswered(sent) == []
        assert _texts(sent[1:-1]) == _texts(json.loads(history)[1:])
        new = done.result["messages"][len(done.restored["messages"]) :]
        assert [type(m) for m in new] == [type(new[0]), AIMessage]  # the query, the answer: no tool ran
        assert not any(isinstance(m, ToolMessage) for m in new)


def test_openai_agents_sdk_resumes_at_every_entry(agents_sdk_run, llm, monkeypatch, tmp_path):
    from agents import Runner
    from agents.items import MessageOutputItem

    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("WEATHER_FILE", str(agents_sdk_run.parents[1] / "weather.json"))
    session = load_session(agents_sdk_run)
    distinct = _histories(session, tmp_path)
    _tool_answered_from_its_span(session, distinct)
    assert len(distinct) == 3
    example = _example(MODEL_EXAMPLES / "agents_sdk_weather.py")
    for history, entry in distinct.items():
        agent = example.build(example.SYSTEM_PROMPT)
        restored = resume_from_snapshot(session, at=entry, agent=agent)
        llm.reset()
        llm.queue("openai_chat_text")
        result = Runner.run_sync(agent, [*restored.restored, {"role": "user", "content": "And tomorrow?"}])
        assert result.final_output == HELLO
        sent = llm.requests[-1]["body"]["messages"]
        assert len(llm.requests) == 1 and _unanswered(sent) == []  # no dangling tool call
        assert _texts(sent[1:-1]) == _texts(json.loads(history)[1:])
        assert [type(i) for i in result.new_items] == [MessageOutputItem]  # no tool re-run


def test_strands_resumes_at_every_entry(strands_run, llm, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    session = load_session(strands_run.checkpoint)
    distinct = _histories(session, tmp_path)
    _tool_answered_from_its_span(session, distinct)
    assert len(distinct) == 3
    strands_module = _example(EXAMPLES / "strands_agent.py")
    for history, entry in distinct.items():
        agent = strands_module.make_agent()
        llm.reset()
        llm.queue("openai_chat_text_stream")
        done = resume_and_continue(session, None, "And tomorrow?", agent, at=entry)
        assert done.answer.strip() == HELLO
        sent = llm.requests[-1]["body"]["messages"]
        assert len(llm.requests) == 1 and _unanswered(sent) == []
        results = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]
        assert all(r["status"] == "success" for r in results)  # nothing injected as failed
        assert INTERRUPTED not in json.dumps(sent)
        assert len(results) == sum(m["role"] == "tool" for m in json.loads(history))  # no tool re-run


def test_a_fork_at_a_tool_call_without_its_result_says_it_cuts_back(langgraph_run, llm, tmp_path):
    """The first snapshot is taken when the model has asked for the tool: the fork there is
    resumable, cut back to the question, and says so; the printed command resumes the branch."""
    session = load_session(langgraph_run.checkpoint)
    first = next(e.id for e in session.events if e.type == "snapshot")
    out = tmp_path / "branch.checkpoint.jsonl"
    done = cli("fork", str(langgraph_run.checkpoint), "--at", first, "--output", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "resumable: the conversation at the fork point, 2 messages; cut back to the last complete turn"
        in (done.stdout)
    )
    assert "get_weather (call_weather_1) has no result at this entry" in done.stdout
    command = next(line for line in done.stdout.splitlines() if "otel-agent-trace resume" in line)
    assert f"--at {first} --agent" in command
    llm.reset()
    llm.queue("openai_chat_text")
    resumed = cli(
        "resume", str(out), "--at", first, "--agent", "langgraph_agent:make_graph",
        "--directory", str(tmp_path / "continued"), "And tomorrow?",
        cwd=EXAMPLES, env={"OPENAI_BASE_URL": llm.openai_url},
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "cut back to the last complete turn (2 of 3 messages)" in resumed.stdout
    assert f"answer: {HELLO}" in resumed.stdout
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
