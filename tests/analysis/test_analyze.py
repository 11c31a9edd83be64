"""``analyze`` on sessions recorded by the real instrumentation: what a user checks first —
did the run work, where did it first go wrong, did it recover, did it test its work, did it
loop, what did it cost — and the exit code that says whether there is a finding."""

from __future__ import annotations

import json
import zipfile

from otel_agent_trace.offline.analysis import analyze_session
from tests.analysis.conftest import ANSWER, cli


def test_recovered_run_with_a_passing_test(recorded):
    result = analyze_session(recorded["fixed"])
    assert result["status"] == "ok" and result["complete"]
    failure = result["failure"]
    assert failure["primary_stage"] == "model"  # the 500 came first
    assert failure["final_stage"] is None
    assert failure["by_stage"] == {"model": 1, "tool": 1}
    assert "500" in failure["first"]["reason"] or "server" in failure["first"]["reason"].lower()
    recovery = result["recovery"]
    assert recovery["recovered"] and recovery["later_attempt_succeeded"]
    assert recovery["unrecovered"] == ["tool:read_file"]  # never read successfully
    verification = result["verification"]
    assert verification["by_kind"] == {"test": {"runs": 1, "passed": 1}}
    assert "pytest" in verification["last"]["command"] and verification["last"]["passed"]
    assert verification["files_written"] == 2 and not verification["writes_after_last_verification"]
    assert not verification["gap"]
    assert result["loops"] == []
    counts = result["counts"]
    assert (counts["model_calls"], counts["tool_calls"]) == (5, 4)
    assert result["tokens"]["input"] == 3 * 100 + 150 and result["tokens"]["output"] == 3 * 20 + 10
    assert set(result["latency"]["by_tool"]) == {"read_file", "write_file", "run_shell"}
    assert result["latency"]["by_tool"]["write_file"]["count"] == 2
    assert result["latency"]["by_model"]["gpt-4o-mini"]["errors"] == 1
    assert result["slowest"][0]["name"] == "invoke_agent coder"
    assert result["unfinished"]["count"] == 0
    assert result["health"]["grade"] == "good", result["health"]
    assert (
        result["final_answer"]["chars"] == len(ANSWER) and result["final_answer"]["text"] is None
    )  # trace tier


def test_checkpoint_tier_has_the_final_answer_text(recorded):
    checkpoint = recorded["fixed"].with_name(recorded["fixed"].name.replace(".jsonl", ".checkpoint.jsonl"))
    result = analyze_session(checkpoint)
    assert result["tier"] == "checkpoint"
    assert result["final_answer"]["text"] == ANSWER


def test_loop_of_the_same_failing_call(recorded):
    result = analyze_session(recorded["loop"])
    (loop,) = result["loops"]
    assert loop["tool"] == "read_file" and loop["count"] == 4 and loop["failed"] == 4
    assert loop["max_consecutive"] == 4
    assert result["verification"]["gap"]
    assert result["failure"]["primary_stage"] == "tool"
    assert result["health"]["grade"] == "risky"
    reasons = " ".join(result["health"]["reasons"])
    assert "read_file called 4 times" in reasons and "without running tests" in reasons


def test_failing_tests_are_the_final_stage(recorded):
    result = analyze_session(recorded["failing_tests"])
    assert result["status"] == "ok"  # the agent answered...
    assert result["failure"]["final_stage"] == "verification"  # ...on red tests
    assert result["verification"]["by_kind"] == {"test": {"runs": 1, "passed": 0}}
    assert result["health"]["grade"] != "good"
    done = cli("analyze", str(recorded["failing_tests"]))
    assert done.returncode == 1, done.stderr
    assert "FAILED" in done.stdout and "final stage verification" in done.stdout


def test_crashed_run_shows_unfinished_spans(recorded):
    result = analyze_session(recorded["crash"])
    assert result["status"] == "incomplete" and not result["complete"]
    assert result["failure"]["final_stage"] == "sys"
    names = [span["name"] for span in result["unfinished"]["spans"]]
    assert "invoke_agent coder" in names
    assert result["health"]["grade"] == "risky"
    assert any("no session.end" in reason for reason in result["health"]["reasons"])


def test_max_turns_is_a_limit(recorded):
    result = analyze_session(recorded["max_turns"])
    assert result["status"] == "failed"
    assert result["failure"]["final_stage"] == "limits"
    assert result["failure"]["primary_stage"] == "tool"  # the reads of missing files came first


def test_cli_human_output_and_exit_codes(recorded):
    done = cli("analyze", str(recorded["fixed"]))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "status: ok" in out and "health: good" in out
    assert "primary stage model, final stage none" in out
    assert "test 1/1 passed" in out
    assert "read_file" in out and "run_shell" in out
    crash = cli("analyze", str(recorded["crash"]))
    assert crash.returncode == 1
    assert "unfinished spans: " in crash.stdout and "invoke_agent coder" in crash.stdout


def test_cli_json(recorded):
    done = cli("analyze", "--json", str(recorded["loop"]))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["loops"][0]["tool"] == "read_file"
    assert data == json.loads(json.dumps(analyze_session(recorded["loop"])))


def test_zip_with_its_child_files_reads_like_the_jsonl(recorded):
    path = recorded["fixed"]
    from_zip = analyze_session(path.with_suffix(".zip"))
    from_jsonl = analyze_session(path)
    for key in ("status", "counts", "failure", "verification", "tokens", "loops", "health"):
        assert from_zip[key] == from_jsonl[key], key
    with zipfile.ZipFile(path.with_suffix(".zip")) as zf:
        assert "events.jsonl" in zf.namelist()
