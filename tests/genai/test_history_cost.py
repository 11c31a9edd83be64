"""A call's cost does not grow with the conversation: the recorder recognises a message it has
already recorded without hashing it again (issue 12). These tests hold what that must not change:
each message is written once per file however often it is resent, and a message changed in place
(the same object, other content) gets its own digest and entry — never the old one's. Real
client, the fake model server, both tiers (checkpoint keeps the text, so the snapshots rebuild
the conversation as it was at each call)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import load_session
from otel_agent_trace.recording import message_store
from tests.genai.genai_helpers import entries, strip_digests


def _files(session: oat.Session) -> tuple[Path, Path]:
    trace = next(p for p in session.files if "checkpoint" not in p.name)
    return trace, next(p for p in session.files if "checkpoint" in p.name)


def _message_digests(path: Path) -> list[str]:
    return [e["digest"] for e in entries(path) if e["type"] == "message"]


def _call(client: Any, llm: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One model call; returns the input as it was sent (a deep copy: the test mutates it later)."""
    llm.queue("openai_chat_final")
    sent = copy.deepcopy(messages)
    client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return sent


def _inputs_per_snapshot(path: Path, sent: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The input part of each call's automatic snapshot, as the checkpoint file rebuilds it."""
    snapshots = load_session(path).snapshots
    assert len(snapshots) == len(sent)
    return [strip_digests(s["agent_messages"][: len(m)]) for s, m in zip(snapshots, sent, strict=True)]


def test_resent_messages_are_written_once_per_file(openai_client, llm, checkpoint):
    history = [{"role": "system", "content": "You are terse."}]
    for i in range(12):  # the history's objects kept across calls, as an agent loop keeps them
        history.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 20})
    sent = []
    for n in range(6):
        sent.append(_call(openai_client, llm, [*history, {"role": "user", "content": f"question {n}"}]))
    trace, full = _files(checkpoint)
    checkpoint.stop()
    for path in (trace, full):
        digests = _message_digests(path)
        assert len(digests) == len(set(digests))  # each message once
        for message in history:
            assert fmt.content_sha256(message) in digests
    assert _inputs_per_snapshot(full, sent) == sent


def test_a_tool_calling_history_resent_is_written_once_per_file(openai_client, llm, checkpoint):
    """The same with the SDK's own message objects in the history (an agent appending
    ``response.choices[0].message`` as it is) and tool results: each message once per file, and
    each call's snapshot as sent."""
    from openai.types.chat import ChatCompletionMessage

    history: list[Any] = [{"role": "system", "content": "You are terse."}]
    for i in range(4):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "user", "content": f"question {i}"})
        history.append(ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [call]}))
        history.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"result {i}"})
        history.append(ChatCompletionMessage(role="assistant", content=f"answer {i}"))
    as_sent = [m if isinstance(m, dict) else m.model_dump(exclude_none=True, mode="json") for m in history]
    sent = []
    for n in range(5):
        llm.queue("openai_chat_final")
        question = {"role": "user", "content": f"and now {n}?"}
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=[*history, question])
        sent.append([*as_sent, question])
    trace, full = _files(checkpoint)
    checkpoint.stop()
    for path in (trace, full):
        digests = _message_digests(path)
        assert len(digests) == len(set(digests))  # each message once
        assert {fmt.content_sha256(m) for m in as_sent} <= set(digests)
    assert _inputs_per_snapshot(full, sent) == sent


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda m: m.__setitem__("content", m["content"] + "!"), id="text replaced"),
        pytest.param(lambda m: m.__setitem__("name", "alice"), id="key added"),
        pytest.param(lambda m: m.__setitem__("content", [{"type": "text", "text": "parts"}]), id="to parts"),
    ],
)
def test_a_message_changed_in_place_gets_a_new_digest(openai_client, llm, checkpoint, change):
    history = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "first question"}]
    first = _call(openai_client, llm, history)
    change(history[1])  # the same dict object, other content
    second = _call(openai_client, llm, history)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    assert first[1] != second[1]
    for path in (trace, full):
        digests = _message_digests(path)
        assert fmt.content_sha256(first[1]) in digests
        assert fmt.content_sha256(second[1]) in digests  # not taken for the one recorded first
    assert _inputs_per_snapshot(full, [first, second]) == [first, second]


def test_parts_changed_in_place_get_a_new_digest(openai_client, llm, checkpoint):
    """A message holding a list (content parts) changed deep inside, its list and dict objects the
    same: recognised only by hashing it again."""
    parts = [{"type": "text", "text": "look at this"}]
    history = [{"role": "user", "content": parts}]
    first = _call(openai_client, llm, history)
    parts[0]["text"] = "look at that"
    second = _call(openai_client, llm, history)
    parts[0]["text"] = "look at this"  # back as it was: the first entry again
    third = _call(openai_client, llm, history)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    for path in (trace, full):
        digests = _message_digests(path)
        assert digests.count(fmt.content_sha256(first[0])) == 1
        assert digests.count(fmt.content_sha256(second[0])) == 1
    assert _inputs_per_snapshot(full, [first, second, third]) == [first, second, third]


def test_a_changed_system_prompt_is_seen(openai_client, llm, checkpoint):
    history = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
    _call(openai_client, llm, history)
    _call(openai_client, llm, history)
    history[0]["content"] = "You are verbose."
    _call(openai_client, llm, history)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    snapshots = load_session(full).snapshots
    assert [s["system_prompt"] for s in snapshots] == ["You are terse."] * 2 + ["You are verbose."]
    expected = [fmt.content_sha256(s["system_prompt"]) for s in snapshots]
    assert [s["system_prompt_hash"] for s in snapshots] == expected
    shown = [s["system_prompt"] for s in load_session(trace).snapshots]  # the trace tier: its digest
    assert [s["sha256"] for s in shown] == expected


def test_past_the_bound_the_remembered_messages_are_forgotten(openai_client, llm, checkpoint, monkeypatch):
    """Memory stays bounded (the remembered keys hold the messages' text alive); what is forgotten
    is hashed again and still found in the file: written once all the same."""
    monkeypatch.setattr(message_store, "KNOWN_MESSAGES", 5)
    history = [{"role": "user", "content": f"message {i}"} for i in range(9)]
    sent = [_call(openai_client, llm, history) for _ in range(3)]
    recorder = checkpoint._recorder
    assert len(recorder.message_store) <= 5 and all(len(t.known) <= 5 for t in recorder.tiers)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    for path in (trace, full):
        digests = _message_digests(path)
        assert len(digests) == len(set(digests))
    assert _inputs_per_snapshot(full, sent) == sent


def test_a_sliding_window_of_snapshots_is_recorded_as_given(checkpoint):
    """Snapshots through the public API of a conversation kept in a sliding window (the oldest turn
    dropped as each new one comes, once two at a time, once replaced by a summary), a message still
    in the window changed in place: each snapshot holds what it was given, and each message is
    written once per file (the recorder lines the rest up with the last snapshot's again)."""
    system = {"role": "system", "content": "Be brief."}
    history: list[dict[str, Any]] = []
    given = []
    for turn in range(10):
        history += [
            {"role": "user", "content": f"question {turn}"},
            {"role": "assistant", "content": f"answer {turn}"},
        ]
        del history[: max(0, len(history) - 8)]
        if turn == 5:
            history[1]["content"] = "answer, edited"
        if turn == 7:
            del history[:4]
        if turn == 8:
            history[:2] = [{"role": "user", "content": "(earlier: question 7, answered)"}]
        messages = [system, *history]
        given.append(copy.deepcopy(messages))
        oat.snapshot(f"turn {turn}", messages=messages)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    snapshots = load_session(full).snapshots
    assert [strip_digests(s["agent_messages"]) for s in snapshots] == given
    for path in (trace, full):
        digests = _message_digests(path)
        assert len(digests) == len(set(digests))  # each message once


def test_record_message_twice_is_one_entry(checkpoint):
    first = oat.record_message("user", "the same words")
    again = oat.record_message("user", "the same words")
    other = oat.record_message("user", "other words")
    trace, full = _files(checkpoint)
    checkpoint.stop()
    assert first == again != other
    for path in (trace, full):
        assert len(_message_digests(path)) == 2


def _model_call_contents(path: Path) -> list[dict[str, Any]]:
    return [e["content"] for e in entries(path) if e["type"] == "span.end" and "content" in e]


def test_tool_definitions_changed_in_place_are_written_again(openai_client, llm, checkpoint):
    """Tool definitions as the last model call's are not repeated (``same``); the same list
    changed in place is written again, in both tiers."""
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather."}}]
    history = [{"role": "user", "content": "hi"}]
    for _ in range(2):
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=tools)
    tools[0]["function"]["description"] = "Weather of a city."
    llm.queue("openai_chat_final")
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=tools)
    trace, full = _files(checkpoint)
    checkpoint.stop()
    for path in (trace, full):
        contents = _model_call_contents(path)
        assert len(contents) == 3
        assert "tool_definitions" in contents[0] and "tool_definitions" in contents[2]
        assert "tool_definitions" in contents[1].get("same", [])
        assert "tool_definitions" not in contents[2].get("same", [])
    assert "Weather of a city." in str(_model_call_contents(full)[2]["tool_definitions"])
