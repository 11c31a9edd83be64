"""Values that change from run to run by nature (the clock, pids, random ids, temporary paths, the
process's own log lines) are not a divergence: a DevDuck-like Strands agent, whose system prompt
carries them all, recorded and model-replayed a while later, replays whole; a real change (an
edited prompt, an edit next to a timestamp, a changed tool result) still stops the replay."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import AGENTS, agent_output, record, replay

DUCK = AGENTS / "duck_agent.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    rec = record(DUCK, tmp_path_factory.mktemp("duck"), stream=True)  # Strands' OpenAI provider streams
    time.sleep(1.1)  # the clock moves on: the replay's prompt holds other times
    return rec


def test_a_run_differing_only_in_volatile_values_replays_without_divergence(recorded):
    done, report = replay(recorded)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    assert report["divergences"] == [] and report["answered"] == 2 and report["unused"] == 0
    assert [c["status"] for c in report["calls"]] == ["replayed", "replayed"]
    # what differed is said, as volatile, and counted
    notes = " ".join(note for c in report["calls"] for note in c.get("volatile", []))
    for kind in ("log lines (", "time ", "uuid ", "pid ", "temporary path ", "id "):
        assert kind in notes, (kind, notes)
    assert report["volatile_values"] >= 2 * 6
    assert "volatile (not divergences):" in done.stdout and "no divergence" in done.stdout


def test_an_edited_prompt_still_stops_at_call_1_with_the_diff(recorded):
    done, report = replay(recorded, agent_args=("--prompt", "You answer weather questions in French."))
    assert done.returncode == 1
    (first,) = report["divergences"]
    assert first["call"] == 1 and report["answered"] == 0
    (diff,) = [d for d in first["differences"] if d.startswith("body.messages[0].content")]
    assert "-You answer weather questions. Use the tools." in diff
    assert "+You answer weather questions in French." in diff


def test_an_edit_next_to_a_timestamp_is_a_divergence(recorded):
    done, report = replay(recorded, agent_args=("--time-label", "Local Time"))
    assert done.returncode == 1
    (first,) = report["divergences"]
    (diff,) = first["differences"]
    assert "-Current Time: " in diff and "+Local Time: " in diff


def test_a_changed_tool_result_stops_at_the_next_model_call(recorded):
    weather = recorded.cwd / "weather.json"
    original = weather.read_text()
    weather.write_text(json.dumps({"Paris": {"temp_c": 25, "sky": "sunny"}}))
    try:
        done, report = replay(recorded, "--tools", "live")
    finally:
        weather.write_text(original)
    assert done.returncode == 1
    (first,) = report["divergences"]
    assert first["call"] == 2 and [c["status"] for c in report["calls"]] == ["replayed", "stopped"]
    assert any('\\"temp_c\\": 25' in d for d in first["differences"]), first["differences"]


# --- the rule, on texts (otel_agent_trace.model_replay._diff) ---------------------------------

NOW = 1_800_000_000.0  # the clock at the replay


def _same(old: str, new: str) -> list[str] | None:
    from otel_agent_trace.model_replay._diff import volatile_only

    return volatile_only(old, new, NOW)


def test_clock_values_moved_forward_are_volatile_and_moved_back_or_ahead_are_not():
    assert _same("at 2027-01-15T08:00:00Z.", "at 2027-01-15T08:00:02Z.") == [
        "time 2027-01-15T08:00:00Z → 2027-01-15T08:00:02Z"
    ]
    assert _same("at 2027-01-15T08:00:00Z.", "at 2027-01-14T08:00:00Z.") is None  # back a day
    assert _same("due 2027-01-15", "due 2031-01-15") is None  # into the future
    assert _same(f"t={NOW - 30:.3f}", f"t={NOW - 1:.3f}") is not None  # epoch, with the clock
    assert _same(f"n={int(NOW) - 30}", f"n={int(NOW) + 86400}") is None  # a number, not the clock
    assert _same("Monday, January 11, 2027", "Friday, January 15, 2027") is not None


def test_a_real_edit_next_to_a_volatile_value_is_not_volatile():
    old = "Current Time: 2027-01-15 08:00:00 pid 41 /tmp/tmpa1b2c3\nBe brief."
    assert _same(old, "Current Time: 2027-01-15 08:00:05 pid 47 /tmp/tmpzz99x\nBe brief.") is not None
    assert _same(old, "Local Time: 2027-01-15 08:00:05 pid 47 /tmp/tmpzz99x\nBe brief.") is None
    assert _same(old, "Current Time: 2027-01-15 08:00:05 pid 47 /tmp/tmpzz99x\nBe long.") is None
    assert _same(old, "Current Time: 2027-01-15 08:00:05 pid 47\nBe brief.") is None  # a value gone


def test_log_lines_are_set_aside_and_ids_aligned_by_their_kind():
    log = "2027-01-15 08:00:00,001 - duck - INFO - started\n"
    old = f"## Logs\n{log}end 3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    new = f"## Logs\n{log}{log.replace('started', 'called')}end 7c9e6679-7425-40de-944b-e07fc1f90ae7"
    notes = _same(old, new)
    assert notes is not None and notes[0] == "log lines (0 → 1 where the texts differ)"
    assert notes[1].startswith("uuid ")
    assert _same("## Logs\nnot a log line\n", "## Logs\nnot a log line!\n") is None
