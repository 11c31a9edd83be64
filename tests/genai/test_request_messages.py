"""What a chat request's messages become in the session: the conversation an agent loop really
sends (tool calls, tool results, content parts, the SDK's own message objects, sentinels) is
rebuilt exactly from the checkpoint file, and its system prompt is found wherever it is."""

from __future__ import annotations

from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import strip_digests

TOOL_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
}


def _checkpoint_file(session: Any) -> Any:
    return next(p for p in session.files if "checkpoint" in p.name)


def _snapshots(checkpoint: Any) -> list[dict[str, Any]]:
    """The checkpoint file's snapshots, once the session is stopped."""
    path = _checkpoint_file(checkpoint)
    checkpoint.stop()
    return load_session(path).snapshots


def _sent_once(openai_client: Any, llm: Any, checkpoint: Any, messages: list[Any]) -> dict[str, Any]:
    """The one snapshot of a session whose only call sent ``messages``."""
    llm.queue("openai_chat_final")
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    (snapshot,) = _snapshots(checkpoint)
    return snapshot


def _assert_each_call_recorded_as_sent(checkpoint: Any, sent: list[list[Any]]) -> None:
    """One snapshot per call, each holding exactly the messages that call sent."""
    snapshots = _snapshots(checkpoint)
    assert len(snapshots) == len(sent)
    for snapshot, messages in zip(snapshots, sent, strict=True):
        assert strip_digests(snapshot["agent_messages"][: len(messages)]) == messages


def test_an_agent_loops_messages_are_rebuilt_exactly(openai_client, llm, checkpoint):
    from openai import NOT_GIVEN
    from openai.types.chat import ChatCompletionMessage

    sdk_message = ChatCompletionMessage(role="assistant", content="Let me check.")  # passed back as is
    parts = [{"type": "text", "text": "and this"}, {"type": "text", "text": "too"}]
    messages: list[Any] = [
        {"role": "developer", "content": "Answer in one line."},
        {"role": "user", "content": "Weather in Oslo?"},
        sdk_message,
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "12 °C"},
        {"role": "user", "content": parts, "name": NOT_GIVEN},  # a sentinel is left out
    ]
    snapshot = _sent_once(openai_client, llm, checkpoint, messages)
    sent = strip_digests(snapshot["agent_messages"][: len(messages)])
    assert sent == [
        messages[0],
        messages[1],
        {"role": "assistant", "content": "Let me check."},
        messages[3],
        messages[4],
        {"role": "user", "content": parts},
    ]
    assert snapshot["system_prompt"] == "Answer in one line."
    assert isinstance(messages[2], ChatCompletionMessage)  # the agent's objects untouched
    assert messages[5]["name"] is NOT_GIVEN


def test_the_system_prompt_is_found_after_a_long_conversation(openai_client, llm, checkpoint):
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(50)]
    messages.append({"role": "system", "content": "Late instructions."})
    messages.append({"role": "user", "content": "and now?"})
    snapshot = _sent_once(openai_client, llm, checkpoint, messages)
    assert snapshot["system_prompt"] == "Late instructions."
    assert strip_digests(snapshot["agent_messages"][: len(messages)]) == messages


def test_a_system_prompt_first_and_a_developer_message_later_are_both_found(openai_client, llm, checkpoint):
    messages: list[Any] = [{"role": "system", "content": "Be brief."}]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(30)]
    messages.append({"role": "developer", "content": "Now in French."})
    messages.append({"role": "user", "content": "and now?"})
    snapshot = _sent_once(openai_client, llm, checkpoint, messages)
    prompt = snapshot["system_prompt"]
    assert "Be brief." in prompt and "Now in French." in prompt
    assert prompt.index("Be brief.") < prompt.index("Now in French.")


def test_each_calls_system_prompt_is_what_that_call_sent(openai_client, llm, checkpoint):
    """Where the system prompts of a resent conversation are is carried from the call before and
    only the new messages are looked at: a developer message added, resent, left behind by many
    new messages, then the system prompt dropped by a sliding window, then a new conversation."""
    history: list[Any] = [{"role": "system", "content": "Be brief."}]
    history += [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(20)]
    sent = [history + [{"role": "user", "content": "q0"}]]
    history.append({"role": "developer", "content": "Now in French."})
    sent.append(history + [{"role": "user", "content": "q1"}])
    sent.append(history + [{"role": "user", "content": "q2"}])
    history += [{"role": "user" if i % 2 == 0 else "assistant", "content": f"more {i}"} for i in range(12)]
    sent.append(history + [{"role": "user", "content": "q3"}])
    sent.append(history[5:] + [{"role": "user", "content": "q4"}])
    sent.append([{"role": "user", "content": "a new conversation"}])
    for messages in sent:
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    prompts = [snapshot.get("system_prompt") for snapshot in _snapshots(checkpoint)]
    assert prompts[0] == "Be brief."
    for prompt in prompts[1:4]:
        assert "Be brief." in prompt and "Now in French." in prompt
    assert prompts[4] == "Now in French."
    assert not prompts[5]


def test_a_developer_role_given_as_a_str_enum_is_found(openai_client, llm, checkpoint):
    """Roles an agent keeps as a ``str`` enum are roles: found among a few new messages and in a
    full look alike."""
    from enum import Enum

    class Role(str, Enum):
        SYSTEM = "system"
        DEVELOPER = "developer"
        USER = "user"

    short = [{"role": Role.SYSTEM, "content": "Be brief."}, {"role": Role.DEVELOPER, "content": "In French."}]
    long = short[:1] + [{"role": Role.USER, "content": f"turn {i}"} for i in range(12)] + short[1:]
    for messages in (short, long):
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    for snapshot in _snapshots(checkpoint):
        assert "Be brief." in snapshot["system_prompt"] and "In French." in snapshot["system_prompt"]


def test_a_grown_conversation_resent_as_equal_copies_keeps_its_message_ids(openai_client, llm, checkpoint):
    """A framework that rebuilds every message dict for each call, growing the conversation by a
    question a call: each snapshot holds what its call sent, and a message is written once."""
    sent: list[list[Any]] = []
    for turn in range(4):
        messages = [{"role": "system", "content": "Be brief."}]
        messages += [{"role": "user", "content": f"question {i}"} for i in range(turn + 1)]
        sent.append([dict(m) for m in messages])
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    path = _checkpoint_file(checkpoint)
    _assert_each_call_recorded_as_sent(checkpoint, sent)
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    written = [e["role"] for e in entries if e.get("type") == fmt.MESSAGE and e.get("role") != "assistant"]
    assert sorted(written) == ["system"] + ["user"] * 4  # each message once, however often resent


def test_no_system_prompt_is_none(openai_client, llm, checkpoint):
    snapshot = _sent_once(openai_client, llm, checkpoint, [{"role": "user", "content": "hi"}])
    assert not snapshot.get("system_prompt")


def test_a_resent_message_changed_in_place_is_read_again(openai_client, llm, checkpoint):
    """The second call resends the same message objects; one of them now holds an SDK object
    and a sentinel: it is read again (dumped, the sentinel left out), not taken as before."""
    from openai import NOT_GIVEN
    from openai.types.chat import ChatCompletionMessage

    messages: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
    for _ in range(2):
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    messages[1]["name"] = NOT_GIVEN
    messages.append(ChatCompletionMessage(role="assistant", content="Hi."))
    messages.append({"role": "user", "content": "again"})
    llm.queue("openai_chat_final")
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    path = _checkpoint_file(checkpoint)
    checkpoint.stop()
    last = load_session(path).snapshots[-1]
    assert strip_digests(last["agent_messages"][:4]) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "again"},
    ]


def test_a_conversation_changed_as_agents_change_it_is_recorded_as_sent(openai_client, llm, checkpoint):
    """Call after call, the conversation is extended, has its last message replaced, has a message
    changed in place, loses its oldest turns, and is resent as it is: each call's snapshot holds
    exactly what that call sent (the recorder keeps the capture's copies of resent messages and
    knows them again by identity: a message changed in place since is never taken as before)."""
    import copy

    system = {"role": "system", "content": "Be brief."}
    u1 = {"role": "user", "content": "one"}
    a1 = {"role": "assistant", "content": "uno"}
    u2 = {"role": "user", "content": "two"}
    u3 = {"role": "user", "content": "three"}
    u4 = {"role": "user", "content": "four"}
    sent: list[list[dict[str, Any]]] = []

    def call(messages: list[dict[str, Any]]) -> None:
        sent.append(copy.deepcopy(messages))
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)

    call([system, u1])
    call([system, u1, a1, u2])  # extended
    call([system, u1, a1, u3])  # its last message replaced
    u1["content"] = "one, changed"  # changed in place, resent
    call([system, u1, a1, u3, u4])
    call([system, a1, u3, u4])  # the oldest turn dropped
    call([system, a1, u3, u4])  # resent as it is
    _assert_each_call_recorded_as_sent(checkpoint, sent)
    assert u1 == {"role": "user", "content": "one, changed"}  # the agent's objects untouched
    assert system == {"role": "system", "content": "Be brief."}


def test_messages_after_an_sdk_object_changed_in_place_are_recorded_as_sent(openai_client, llm, checkpoint):
    """An agent that appends the SDK's own message object (``response.choices[0].message``) and
    later edits a message after it in place (trimming an old tool result, as context compaction
    does): each call's snapshot holds what that call sent, never the message as it was before."""
    import copy

    from openai.types.chat import ChatCompletionMessage

    system = {"role": "system", "content": "Be brief."}
    u1 = {"role": "user", "content": "one"}
    reply = ChatCompletionMessage(role="assistant", content="uno")  # the SDK's, appended as is
    tool = {"role": "user", "content": "a long tool result"}
    u2 = {"role": "user", "content": "two"}
    sent: list[list[Any]] = []

    def call(messages: list[Any]) -> None:
        sent.append(
            [
                m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else copy.deepcopy(m)
                for m in messages
            ]
        )
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)

    call([system, u1, reply, tool])
    tool["content"] = "(trimmed)"  # changed in place, resent
    call([system, u1, reply, tool, u2])
    reply.content = "uno, edited"  # the SDK object changed in place too
    call([system, u1, reply, tool, u2])
    _assert_each_call_recorded_as_sent(checkpoint, sent)


def _as_sent(value: Any) -> Any:
    """What the recorder should hold for a message: the SDK's objects as they dump themselves."""
    if hasattr(value, "model_dump"):
        return _as_sent(value.model_dump(exclude_none=True, mode="json"))
    if isinstance(value, dict):
        return {k: _as_sent(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_sent(v) for v in value]
    return value


def test_a_tool_calling_history_changed_deep_inside_is_recorded_as_sent(openai_client, llm, checkpoint):
    """A tool-calling loop's history holds the SDK's message objects, dicts with nested tool calls
    and content parts, and dicts holding SDK objects; resent call after call, each is changed deep
    inside in turn (a tool call's arguments, an added tool call, an extra field, a nested dict, a
    part appended, an SDK object inside a dict). Each call's snapshot holds what that call sent:
    the capture knows a resent message by comparing it with the last call's (without reading it
    again), and a change anywhere inside is seen."""
    from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageToolCall

    def tool_call(i: int) -> dict[str, Any]:
        return {"id": f"call_{i}", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}

    asks = ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [tool_call(1)]})
    answer = ChatCompletionMessage(role="assistant", content="12 °C in Oslo.")
    nested = {"role": "assistant", "content": None, "tool_calls": [tool_call(2)]}
    parts = {"role": "user", "content": [{"type": "text", "text": "and this"}]}
    sdk_call = ChatCompletionMessageToolCall.model_validate(tool_call(3))
    holding = {"role": "assistant", "tool_calls": [sdk_call]}
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        asks,
        {"role": "tool", "tool_call_id": "call_1", "content": "12"},
        answer,
        nested,
        {"role": "tool", "tool_call_id": "call_2", "content": "13"},
        parts,
        holding,
        {"role": "tool", "tool_call_id": "call_3", "content": "14"},
    ]
    changes = [
        lambda: None,  # resent as it is
        lambda: setattr(asks.tool_calls[0].function, "arguments", '{"city": "Oslo"}'),
        lambda: asks.tool_calls.append(ChatCompletionMessageToolCall.model_validate(tool_call(9))),
        lambda: setattr(answer, "content", "12 °C in Oslo, edited."),
        lambda: setattr(answer, "note", "an extra field"),  # the SDK's models keep extra fields
        lambda: nested["tool_calls"][0]["function"].update(arguments='{"city": "Bergen"}'),
        lambda: parts["content"].append({"type": "text", "text": "too"}),
        lambda: setattr(holding["tool_calls"][0].function, "name", "get_forecast"),
        lambda: holding["tool_calls"].pop(),
        lambda: None,
    ]
    sent: list[list[Any]] = []
    for change in changes:
        change()
        sent.append([_as_sent(m) for m in messages])
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assert sent[1] != sent[0] and sent[-1] == sent[-2]  # (each change is one the dump sees)
    _assert_each_call_recorded_as_sent(checkpoint, sent)


def test_a_sliding_window_over_a_tool_calling_history_is_recorded_as_sent(openai_client, llm, checkpoint):
    """An agent keeping its system prompt and the latest turns only (a sliding window: the oldest
    turn dropped as each new one comes, every message after it moved up), with the SDK's message
    objects and identical tool results among them, changes some of the messages still in the
    window in place, and once replaces its oldest turn by a summary. Each call's snapshot holds what
    that call sent: the capture lines the rest up with the last call's again, and the watches on
    the SDK's objects move with them."""
    from openai.types.chat import ChatCompletionMessage

    system = {"role": "system", "content": "Be brief."}
    history: list[Any] = []
    asks: list[Any] = []
    sent: list[list[Any]] = []
    for turn in range(9):
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        asks.append(ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [call]}))
        history += [
            {"role": "user", "content": f"question {turn}"},
            asks[-1],
            {"role": "tool", "tool_call_id": f"call_{turn}", "content": "ok"},  # the same each turn
            ChatCompletionMessage(role="assistant", content=f"answer {turn}"),
        ]
        del history[: max(0, len(history) - 12)]  # the window: the latest three turns
        if turn == 4:  # an SDK object still in the window, changed in place (after the drop)
            asks[turn - 1].tool_calls[0].function.arguments = '{"edited": true}'
        if turn == 6:  # a plain message in the window, changed in place
            history[-6]["content"] = "ok, edited"
        if turn == 7:  # the window dropped by two turns at once
            del history[:8]
        if turn == 8:  # the oldest turn replaced by a summary of it
            history[:4] = [{"role": "user", "content": "(earlier: question 7, answered)"}]
        messages = [system, *history]
        sent.append([_as_sent(m) for m in messages])
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assert '{"edited": true}' in str(sent[4]) and "ok, edited" in str(sent[6])
    _assert_each_call_recorded_as_sent(checkpoint, sent)


def test_sdk_objects_rebuilt_for_each_call_are_recorded_as_sent(openai_client, llm, checkpoint):
    """A framework that builds the SDK's message objects afresh for every call (equal objects, not
    the same ones): each call's snapshot holds what it sent, a changed one included."""
    from openai.types.chat import ChatCompletionMessage

    sent: list[list[Any]] = []
    for content in ("uno", "uno", "uno, edited"):
        messages: list[Any] = [
            {"role": "user", "content": "one"},
            ChatCompletionMessage(role="assistant", content=content),
            {"role": "user", "content": "two"},
        ]
        sent.append([_as_sent(m) for m in messages])
        llm.queue("openai_chat_final")
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    _assert_each_call_recorded_as_sent(checkpoint, sent)


def test_threads_sending_their_own_tool_calling_histories_are_each_recorded_as_sent(
    openai_client, llm, checkpoint
):
    """Four agent loops on four threads, each resending and changing its own history (the SDK's
    message objects changed in place among them): the capture's memory of the last conversation is
    shared by every thread, and every call's snapshot still holds exactly what that call sent."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import orjson
    from openai.types.chat import ChatCompletionMessage

    sent: list[list[Any]] = []
    lock = threading.Lock()

    def agent(n: int) -> None:
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        asks = ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [call]})
        history: list[Any] = [
            {"role": "user", "content": f"agent {n}"},
            asks,
            {"role": "tool", "tool_call_id": f"call_{n}", "content": "result"},
        ]
        for turn in range(6):
            if turn % 2:
                asks.tool_calls[0].function.arguments = f'{{"turn": {turn}}}'
            history.append(ChatCompletionMessage(role="assistant", content=f"agent {n}, turn {turn}"))
            with lock:
                sent.append([_as_sent(m) for m in history])
                llm.queue("openai_chat_final")
            openai_client.chat.completions.create(model="gpt-4o-mini", messages=history)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(agent, range(4)))
    path = _checkpoint_file(checkpoint)
    checkpoint.stop()
    snapshots = load_session(path).snapshots
    recorded = [strip_digests(s["agent_messages"][:-1]) for s in snapshots]  # (the last: the reply)

    def key(messages: list[Any]) -> bytes:
        return orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)

    assert sorted(map(key, recorded)) == sorted(map(key, sent))
