"""Conversation alignment (session_format/alignment.py): how a conversation sent now lines up
with the one sent before it, as the capture, the recorder and the file's references see it."""

from __future__ import annotations

from typing import Any

import pytest

from otel_agent_trace.session_format.alignment import Alignment, align, dropped_at, keep_of, same


def _turns(n: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 else "assistant", "content": f"turn {i}"} for i in range(n)]


def test_a_grown_conversation_is_as_it_was_up_to_the_last_ones_end():
    before = [{"role": "system", "content": "be brief"}, *_turns(6)]
    now = [*before, {"role": "user", "content": "and now?"}]
    assert align(now, before) == Alignment(prefix=7, changed=[], at=0, dropped=0)


def test_a_replaced_last_message_is_the_one_changed():
    before = _turns(6)
    now = [*before[:5], {"role": "assistant", "content": "another answer"}]
    assert align(now, before) == Alignment(prefix=5, changed=[5], at=0, dropped=0)


def test_equal_copies_are_as_they_were_but_not_by_identity():
    before = _turns(5)
    now = [dict(m) for m in before]
    assert align(now, before).prefix == 5
    # The recorder holds the capture's own copies: there an equal copy is another message.
    assert align(now, before, identity=True) == Alignment(prefix=5, changed=[], at=0, dropped=0)
    now[3] = dict(now[3], content="changed")
    assert align(now, before) == Alignment(prefix=3, changed=[3], at=0, dropped=0)
    assert align(now, before, identity=True) == Alignment(prefix=3, changed=[3, 4], at=0, dropped=0)


def test_a_sliding_window_is_lined_up_again_without_the_dropped_turns():
    system = {"role": "system", "content": "be brief"}
    turns = _turns(20)
    before = [system, *turns[:12]]
    now = [system, *turns[3:12], {"role": "user", "content": "new"}]
    found = align(now, before)
    assert (found.at, found.dropped) == (1, 3)
    assert found.kept(before) == [system, *turns[3:12]]
    assert found.prefix == 10 and found.changed == []


def test_a_summary_in_place_of_dropped_turns_lines_the_rest_up():
    turns = _turns(12)
    summary = {"role": "user", "content": "summary of turns 1 to 4"}
    before = [turns[0], *turns[1:10]]
    now = [turns[0], summary, *turns[5:10]]
    found = align(now, before)
    assert (found.at, found.dropped) == (2, 3)
    assert found.kept(before)[2:] == turns[5:10]
    assert found.prefix == 1 and found.changed == [1]


def test_unrelated_conversations_are_all_changed_and_nothing_dropped():
    before = _turns(6)
    now = [{"role": "user", "content": f"other {i}"} for i in range(4)]
    assert align(now, before) == Alignment(prefix=0, changed=[0, 1, 2, 3], at=0, dropped=0)


def test_dropped_at_needs_the_follower_too():
    a, b, c, d, x = (object() for _ in range(5))
    assert dropped_at([a, c, d], [a, b, c, d], 1, identity=True) == 1
    assert dropped_at([a, c, x], [a, b, c, d], 1, identity=True) == 0  # c found, its follower not
    assert dropped_at([a, x], [a, b, c], 1) == 0


def test_same_is_identity_first_then_equality():
    class Odd:
        def __eq__(self, other: Any) -> bool:
            raise ValueError("never equal, never unequal")

    odd = Odd()
    assert same(odd, odd)
    assert same({"a": 1}, {"a": 1}) and not same({"a": 1}, {"a": 2})
    with pytest.raises(ValueError):
        same(odd, Odd())


def test_the_recorder_survives_an_object_whose_comparison_raises(tmp_path):
    from otel_agent_trace.recording import SessionRecorder
    from otel_agent_trace.settings import Settings

    class Odd:
        def __eq__(self, other: Any) -> bool:
            raise ValueError("no comparing me")

        __hash__ = object.__hash__

    recorder = SessionRecorder(Settings(directory=tmp_path, tiers=("checkpoint",))).start()
    try:
        first = [{"role": "user", "content": "hi"}, Odd(), Odd()]
        assert recorder.snapshot("one", messages=first) == 1
        second = [first[0], Odd(), Odd(), {"role": "user", "content": "x"}]
        assert recorder.snapshot("two", messages=second) == 2
        path = recorder.tiers[0].writer.path
    finally:
        recorder.stop()
    from otel_agent_trace.offline.loader import load_session

    snapshots = load_session(path).snapshots
    assert [s["agent_messages_count"] for s in snapshots] == [3, 4]
    assert snapshots[1]["agent_messages"][0]["role"] == "user"
    assert snapshots[1]["agent_messages"][0]["content_chars"] == 2


def test_keep_of_keeps_the_leading_run_of_a_growing_list():
    base = [f"id{i}" for i in range(30)]
    assert keep_of(base, [*base, "new1", "new2"]) == (30, 30)
    assert keep_of(base[:3], [*base[:3], "x"]) is None  # short: written whole
