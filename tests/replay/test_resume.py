"""Resume puts a recorded conversation back into a real agent — a Strands agent, a LangGraph graph,
a plain message list — equal to what was recorded, and a new query is then answered with that
history sent to the model. The CLI records the continuation as a new session linked to the source."""

from __future__ import annotations

import importlib.util
import json

import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.resume import (
    ResumeError,
    rebuild_context,
    resume_and_continue,
    resume_from_snapshot,
    to_openai,
)

from .conftest import EXAMPLES, cli

HELLO = "Hello! How can I help you today?"


def _example(name):
    spec = importlib.util.spec_from_file_location(f"replay_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(messages):
    return [{k: v for k, v in m.items() if k not in ("content_chars", "content_sha256")} for m in messages]


def test_strands_agent_gets_the_recorded_messages_then_answers(strands_run, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    session = load_session(strands_run.checkpoint)
    agent = _example("strands_agent").make_agent()
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "strands" and restored.snapshot_id == 3
    assert agent.messages == _plain(session.conversation())
    assert agent.messages[0]["content"] == [{"text": "What's the weather in Paris?"}]

    llm.reset()
    llm.queue("openai_chat_text_stream")
    done = resume_and_continue(session, 3, "And tomorrow?", agent)
    assert done.answer.strip() == HELLO
    sent = llm.requests[-1]["body"]["messages"]
    texts = json.dumps(sent, ensure_ascii=False)
    assert "What's the weather in Paris?" in texts and "18°C and sunny in Paris" in texts
    assert sent[-1]["role"] == "user" and "And tomorrow?" in json.dumps(sent[-1])


def test_langgraph_graph_state_gets_the_recorded_messages_then_answers(langgraph_run, llm, monkeypatch):
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    session = load_session(langgraph_run.checkpoint)
    graph = _example("langgraph_agent").make_graph()
    restored = resume_from_snapshot(session, None, agent=graph)
    assert restored.target == "langgraph"
    state = restored.restored["messages"]
    assert [type(m) for m in state] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    recorded = _plain(session.conversation())[1:]  # the graph adds its own prompt (the system message)
    assert [m.content for m in state] == [m["content"] for m in recorded]
    assert state[1].tool_calls == [
        {"id": "call_weather_1", "name": "get_weather", "args": {"city": "Paris"}, "type": "tool_call"}
    ]
    assert state[2].tool_call_id == "call_weather_1"

    llm.reset()
    llm.queue("openai_chat_text")
    done = resume_and_continue(session, None, "And tomorrow?", graph)
    assert done.answer == HELLO
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "What's the weather in Paris?" and sent[-1]["content"] == "And tomorrow?"


def test_a_plain_message_list_is_filled_in_openai_format_and_a_callable_answers(langgraph_run, llm):
    import openai

    session = load_session(langgraph_run.checkpoint)
    messages: list = []
    restored = resume_from_snapshot(session, 2, agent=messages)
    assert restored.target == "openai_messages"
    recorded = _plain(session.conversation())
    assert messages == to_openai(recorded)
    assert [(m["role"], m["content"]) for m in messages] == [(m["role"], m["content"]) for m in recorded]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }

    client = openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)

    def chat(history):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=history)
        return reply.choices[0].message.content

    llm.reset()
    done = resume_and_continue(session, 2, "Thanks!", chat)
    assert done.answer == HELLO
    assert llm.requests[-1]["body"]["messages"] == [*messages, {"role": "user", "content": "Thanks!"}]


def test_rebuild_context_at_any_entry_and_runs_as_separate_windows(notes):
    session = load_session(notes.checkpoint)
    snaps = [e for e in session.events if e.type == "snapshot"]
    for snap in snaps:
        assert (
            rebuild_context(session, until=snap.id)
            == resume_from_snapshot(session, snap.data["snapshot_id"]).messages
        )
    assert rebuild_context(session, until=session.events[0].id) == []
    # A message recorded on its own counts from its entry on: at the tool call that follows it
    counting = next(e for e in session.events if e.data.get("name") == "execute_tool count_words")
    assert rebuild_context(session, until=counting.id)[-1]["content"].startswith('{"tool": "count_words"')
    assert rebuild_context(session)[-1] == {"role": "assistant", "content": "The note has 11 words."}


def test_a_trace_tier_file_cannot_be_resumed_and_says_why(notes):
    with pytest.raises(ResumeError, match="checkpoint tier"):
        resume_from_snapshot(load_session(notes.trace), None, agent=[])


def test_the_cli_resumes_into_the_users_factory_and_records_a_linked_session(strands_run, llm, tmp_path):
    llm.reset()
    llm.queue("openai_chat_text_stream")
    out = tmp_path / "continued"
    done = cli(
        "resume", str(strands_run.checkpoint), "--snapshot", "3", "--agent", "strands_agent:make_agent",
        "--directory", str(out), "And tomorrow?",
        cwd=EXAMPLES, env={"OPENAI_BASE_URL": llm.openai_url},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"answer: {HELLO}" in done.stdout
    source = load_session(strands_run.checkpoint)
    (path,) = out.glob("*.checkpoint.jsonl")
    continued = load_session(path)
    snap_entry = next(e.id for e in source.events if e.type == "snapshot" and e.data["snapshot_id"] == 3)
    link = continued.root.data["metadata"]["user"]["resumed_from"]
    assert link["session_id"] == source.session_id and link["entry_id"] == snap_entry
    assert continued.root.data["metadata"]["name"] == f"resume {source.session_id} at {snap_entry}"
    root = continued.spans[0]
    assert root.name == f"invoke_agent resume {source.session_id} at {snap_entry}"
    assert root.attributes["agent_trace.resume.source_entry"] == snap_entry
    # Strands' own run of the new query is recorded under it
    assert any(s.name == "invoke_agent weather" and s.parent_span_id == root.span_id for s in continued.spans)
    last = continued.snapshots[-1]
    assert last["last_query"] == "And tomorrow?" and last["last_result"].strip() == HELLO
    assert last["agent_messages"][0]["content"] == [{"text": "What's the weather in Paris?"}]


def test_openai_agents_sdk_gets_input_items_then_answers(langgraph_run, llm):
    from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    agent = Agent(
        name="weather",
        instructions="You answer weather questions.",
        model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client),
    )
    session = load_session(langgraph_run.checkpoint)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "openai_agents"
    assert restored.restored == [
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "type": "function_call",
            "call_id": "call_weather_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_weather_1", "output": "18°C and sunny in Paris"},
        {"role": "assistant", "content": "It is 18°C and sunny in Paris."},
    ]
    llm.reset()
    llm.queue("openai_chat_text")
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == HELLO
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[3]["content"] == "18°C and sunny in Paris" and sent[-1]["content"] == "And tomorrow?"


def test_the_recorded_directory_is_used_only_when_asked(strands_run, tmp_path):
    args = ["resume", str(strands_run.checkpoint), "--agent", "strands_agent:make_agent"]
    done = cli(*args, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert "restored into strands; no query given, nothing run" in done.stdout
    assert "working directory" not in done.stdout
    done = cli(*args, "--cwd", "recorded", cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert f"working directory: {strands_run.cwd} (recorded; asked by --cwd recorded)" in done.stdout


def test_a_bad_factory_or_snapshot_is_a_clear_error(strands_run):
    done = cli("resume", str(strands_run.checkpoint), "--agent", "no_such_module:make", cwd=EXAMPLES)
    assert (
        done.returncode == 2
        and "cannot load the agent factory: No module named 'no_such_module'" in done.stderr
    )
    done = cli(
        "resume",
        str(strands_run.checkpoint),
        "--snapshot",
        "9",
        "--agent",
        "strands_agent:make_agent",
        cwd=EXAMPLES,
    )
    assert done.returncode == 2 and "no snapshot 9 (snapshots: 1, 2, 3)" in done.stderr


def test_the_loaded_session_methods_delegate_here(notes):
    session = load_session(notes.checkpoint)
    messages: list = []
    restored = session.resume_from_snapshot(6, agent=messages)
    assert restored.snapshot_id == 6 and messages[-1] == {
        "role": "assistant",
        "content": "The note has 11 words.",
    }
    assert session.rebuild_context() == restored.messages
    assert session.replay_events(lambda e: None).ok


def test_anthropic_format_for_a_plain_list(langgraph_run, llm):
    import anthropic

    from otel_agent_trace.offline.resume import to_anthropic

    recorded = _plain(load_session(langgraph_run.checkpoint).conversation())
    messages = to_anthropic(recorded)
    use = {"type": "tool_use", "id": "call_weather_1", "name": "get_weather", "input": {"city": "Paris"}}
    result = {"type": "tool_result", "tool_use_id": "call_weather_1", "content": "18°C and sunny in Paris"}
    assert messages == [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "It is 18°C and sunny in Paris."},
    ]
    client = anthropic.Anthropic(base_url=llm.anthropic_url, api_key="sk-ant-test", max_retries=0)
    llm.reset()
    reply = client.messages.create(
        model="claude-test", max_tokens=64, system=recorded[0]["content"],
        messages=[*messages, {"role": "user", "content": "And tomorrow?"}],
    )  # fmt: skip
    assert reply.content[0].text
    assert llm.requests[-1]["body"]["messages"][:4] == messages
