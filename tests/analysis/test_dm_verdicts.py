# ruff: noqa: E501  (DM entries are laid out one a line, as DM writes them)
"""DM-Code-Agent files read with DM's own verdicts (``/work/shared/REFERENCE.md`` §9): files made
the way DM's writer makes them (``dm_agent/tracing/writer.py`` at 968fa18: keys sorted, ids
``<run_id[:8]>-<seq:04d>`` from 1, each under the one before; pre-2.0 files without ids), every
expected number worked out by hand from §9's rules (the comment beside it says how)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.analysis import analyze_session

RUN = "0123456789abcdef0123456789abcdef"
RUN2 = "fedcba9876543210fedcba9876543210"


def dm_lines(
    steps: list[tuple[str, dict[str, Any]]],
    *,
    run_id: str = RUN,
    legacy: bool = False,
    timestamps: list[str] | None = None,
    first_seq: int = 1,
    parent: str = "",
) -> list[dict[str, Any]]:
    """Entries as DM's ``TraceWriter.record`` writes them: ``{id, parent_id, timestamp, run_id,
    event, payload}`` (2.0), or without ``id`` / ``parent_id`` (pre-2.0)."""
    out = []
    for n, (event, payload) in enumerate(steps):
        seq = first_seq + n
        entry: dict[str, Any] = {
            "timestamp": timestamps[n] if timestamps else f"2026-01-02T03:04:{seq % 60:02d}.000001+00:00",
            "run_id": run_id,
            "event": event,
            "payload": payload,
        }
        if not legacy:
            entry["id"] = f"{run_id[:8]}-{seq:04d}"
            entry["parent_id"] = parent
            parent = entry["id"]
        out.append(entry)
    return out


def write(path: Path, *groups: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for group in groups for e in group),
        encoding="utf-8",
    )
    return path


# --- 1. a pre-2.0 file whose timestamps are not ISO-8601 --------------------------------------


def test_a_pre_2_0_file_with_dm_test_timestamps_is_read_with_time_unknown(tmp_path):
    # DM's own tests write "t0", "t1", …: DM never parses a timestamp, order is file order.
    steps = [
        ("run_start", {"task": "fix it", "schema_version": "1.2"}),
        ("llm_call", {"step_number": 1, "message_count": 2}),
        ("tool_call", {"step_number": 1, "action": "read_file", "action_input": {"path": "a.py"},
                       "observation": "x = 1", "failed": False}),
        ("step", {"step_number": 1, "action": "read_file", "observation": "x = 1"}),
        ("run_end", {"status": "success", "final_answer": "done", "metadata": {}}),
    ]  # fmt: skip
    path = write(
        tmp_path / "legacy.jsonl", dm_lines(steps, legacy=True, timestamps=[f"t{i}" for i in range(5)])
    )
    session = load_session(path)
    assert [e.id for e in session.events] == [f"legacy-{i:04d}" for i in range(5)]
    assert [e.type for e in session.events] == [s[0] for s in steps]  # file order
    result = analyze_session(path)
    assert result["format"] == "dm-code-agent" and result["entries"] > 0
    assert result["time_known"] is False  # no entry had a time we could read
    assert result["duration_s"] is None  # unknown, not 0: run_end has no duration_seconds
    assert result["failure"]["first"] is None
    with_duration = write(
        tmp_path / "measured.jsonl",
        dm_lines(
            [*steps[:-1], ("run_end", {"status": "success", "duration_seconds": 2.5, "metadata": {}})],
            legacy=True,
            timestamps=[f"t{i}" for i in range(5)],
        ),
    )
    assert analyze_session(with_duration)["duration_s"] == 2.5  # the agent's own measurement


# --- 2. DM's own verdicts (the ``dm`` object) --------------------------------------------------


def _tool(step: int, action: str, path: str | None, observation: str, failed: bool = False):  # type: ignore[no-untyped-def]
    action_input = {"path": path} if path else {}
    return ("tool_call", {"step_number": step, "action": action, "action_input": action_input,
                          "observation": observation, "failed": failed})  # fmt: skip


def _step(step: int, action: str) -> tuple[str, dict[str, Any]]:
    return (
        "step",
        {"step_number": step, "thought": "…", "action": action, "action_input": {}, "observation": ""},
    )


def _llm(step: int) -> tuple[str, dict[str, Any]]:
    return ("llm_call", {"step_number": step, "temperature": 0.2, "message_count": 2, "roles": ["system", "user"],
                         "prompt_chars": 900, "estimated_prompt_tokens": 225, "response_chars": 80})  # fmt: skip


# A successful run holding every event type of DM's list (trace tier). Indexes are 0-based file
# positions, DM's event index.
RECOVERED = [
    ("runtime", {"provider": "deepseek", "model": "deepseek-chat", "base_url": "https://x", "max_steps": 10}),  # 0
    ("run_start", {"schema_version": "2.0", "task": "Fix retry.py and run tests", "cwd": "/w",
                   "python": "3.11.9", "platform": "Linux", "capture_llm_io": False, "metadata": {}}),  # 1
    ("skills", {"activated": ["python"]}),  # 2
    ("plan", {"steps": [{"step_number": 1, "action": "read_file", "reason": "look", "completed": False}]}),  # 3
    ("message", {"step_number": 0, "role": "user", "kind": "task", "content_chars": 26,
                 "content": "Fix retry.py and run tests"}),  # 4
    _llm(1),  # 5
    ("message", {"step_number": 1, "role": "assistant", "kind": "model_response", "content_chars": 80,
                 "content_sha256": "0123456789abcdef"}),  # 6
    _tool(1, "read_file", "retry.py", "文件 retry.py 不存在。"),  # 7: a missing-path reference
    _step(1, "read_file"),  # 8
    _llm(2),  # 9
    _tool(2, "read_file", "src/retry.py", "def retry(): ..."),  # 10
    ("observation_truncated", {"step_number": 2, "action": "read_file", "original_chars": 9000,
                               "kept_chars": 4000, "original_lines": 300}),  # 11
    _step(2, "read_file"),  # 12
    _llm(3),  # 13
    ("edit_guard", {"step_number": 3, "path": "src/util.py", "reason": "never_read"}),  # 14
    _tool(3, "edit_file", "src/util.py", "blocked: read src/util.py first"),  # 15: edit never read
    _step(3, "edit_file"),  # 16
    _llm(4),  # 17
    ("file_backup", {"step_number": 4, "path": "src/retry.py", "backup": "/w/.dm/backup/retry.py"}),  # 18
    _tool(4, "edit_file", "src/retry.py", "ok"),  # 19: read at 10 first
    ("edit_noop", {"step_number": 4, "path": "src/retry.py"}),  # 20
    _step(4, "edit_file"),  # 21
    ("checkpoint_saved", {"step_number": 4}),  # 22
    _llm(5),  # 23
    _tool(5, "run_tests", None, "returncode: 1\n1 failed", failed=True),  # 24: first failure
    _step(5, "run_tests"),  # 25
    ("replan", {"reason": "tests failed", "steps": [{"step_number": 6, "action": "edit_file", "reason": "x"}]}),  # 26
    ("context_budget", {"step_number": 6, "phase": "forced_compress", "estimated_tokens": 9000, "budget": 8000}),  # 27
    ("compaction", {"phase": "accepted", "first_kept_entry_id": f"{RUN[:8]}-0020", "folded_entry_ids": [],
                    "summary": "<agent_memory>…</agent_memory>", "estimated_tokens_before": 9000,
                    "estimated_tokens_after": 4000}),  # 28
    _llm(6),  # 29
    ("parse_error", {"step_number": 6, "error": "Expecting value", "response_chars": 10,
                     "context_replacement": "[omitted]"}),  # 30: second failure
    _llm(7),  # 31
    _tool(7, "run_tests", None, "3 passed"),  # 32
    _step(7, "run_tests"),  # 33
    ("memory_invalidation", {"superseded": 1}),  # 34 (historical)
    _step(8, "finish"),  # 35
    ("message", {"step_number": 8, "role": "assistant", "kind": "completion", "content_chars": 4,
                 "content_sha256": "fedcba9876543210"}),  # 36
    ("run_end", {"status": "success", "duration_seconds": 42.5, "final_answer": "done",
                 "metadata": {"status": "success", "duration_seconds": 42.5, "parse_error_count": 1,
                              "tool_error_count": 1}}),  # 37
]  # fmt: skip


def test_a_recovered_run_gets_dm_verdicts_with_every_event_type(tmp_path):
    result = analyze_session(write(tmp_path / "run.jsonl", dm_lines(RECOVERED)))
    dm = result["dm"]
    assert (dm["run_id"], dm["task"], dm["schema_version"]) == (RUN, "Fix retry.py and run tests", "2.0")
    assert (dm["status"], dm["duration_seconds"]) == ("success", 42.5)  # the last run_end
    assert (dm["provider"], dm["model"]) == ("deepseek", "deepseek-chat")  # the first runtime
    assert (dm["event_count"], dm["step_count"], dm["tool_call_count"], dm["replan_count"]) == (38, 7, 6, 1)
    # failures in file order: 24 (run_tests failed: verification), 30 (parse_error: parse)
    assert dm["primary_failure_stage"] == "verification"
    assert dm["final_failure_stage"] == "none"  # status success
    assert dm["recovery"] == {
        "failure_event_count": 2,
        "first_failure_step": 5,  # the failed tool_call's step_number
        "first_failure_event": "tool_call",
        "replan_count": 1,
        "replanned_after_failure": True,  # the replan at 26 follows the failure at 24
        "recovered": True,  # failures and success
    }
    # steps 1..8; run_tests at 5 and 7; finish at 8: an action before the finish, no gap
    assert dm["verification"] == {
        "actions": [{"step_number": 5, "action": "run_tests"}, {"step_number": 7, "action": "run_tests"}],
        "count": 2,
        "finish_step": 8,
        "before_finish": True,
        "gap": False,
    }
    assert dm["hallucination_signals"] == {
        "edit_without_read_count": 1,  # 15: src/util.py never read (19's src/retry.py was, at 10)
        "edit_guard_blocks": 1,  # 14
        "truncation_hits": 1,  # 11
        "truncation_hit_rate": 1 / 6,  # one truncation over six tool calls
        "missing_path_reference_count": 1,  # 7: "文件 retry.py 不存在。"
    }
    # start and end present, final none, no gap, the failures were replanned after; the
    # metadata's error counts only cost when the final stage is not none: nothing taken off
    assert dm["trace_health"] == {"score": 1.0, "grade": "good", "issues": []}
    assert result["duration_s"] == 42.5  # ours too: the agent's own duration


def test_the_checkpoint_tier_gets_the_same_verdicts(tmp_path):
    # the checkpoint tier: full message text, and a checkpoint entry after each step
    steps: list[tuple[str, dict[str, Any]]] = []
    for event, payload in RECOVERED:
        if event == "message" and "content_sha256" in payload:
            payload = {k: v for k, v in payload.items() if k != "content_sha256"} | {"content": "x" * 4}
        steps.append((event, payload))
        if event == "step":
            state = {"task": "Fix retry.py and run tests", "step_count": payload["step_number"],
                     "conversation_history": [{"role": "user", "content": "Fix retry.py"}], "steps": [],
                     "metadata": {}, "plan": [], "compressor_state": {}, "agent_config": {}, "cwd": "/w",
                     "schema_version": 1}  # fmt: skip
            steps.append(("checkpoint", {"step_number": payload["step_number"], "state": state}))
    trace = analyze_session(write(tmp_path / "trace.jsonl", dm_lines(RECOVERED)))["dm"]
    checkpoint = analyze_session(write(tmp_path / "run.checkpoint.jsonl", dm_lines(steps)))["dm"]
    assert checkpoint["event_count"] == trace["event_count"] + 7  # one checkpoint per step
    assert {k: v for k, v in checkpoint.items() if k != "event_count"} == {
        k: v for k, v in trace.items() if k != "event_count"
    }


def test_a_max_steps_run_is_risky_by_dm(tmp_path):
    steps = [
        RECOVERED[0], RECOVERED[1], _llm(1), _tool(1, "read_file", "a.py", "x"), _step(1, "read_file"),
        _llm(2), _tool(2, "run_python", None, "ok"), _step(2, "run_python"),
        ("run_end", {"status": "max_steps_exceeded", "duration_seconds": 30.0, "final_answer": "",
                     "metadata": {"tool_error_count": 2, "parse_error_count": 0}}),
    ]  # fmt: skip
    dm = analyze_session(write(tmp_path / "max.jsonl", dm_lines(steps)))["dm"]
    # no failure and status max_steps_exceeded: one failure max_steps at index len(events) = 9
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("max_steps", "max_steps")
    assert dm["recovery"] == {
        "failure_event_count": 1,
        "first_failure_step": None,
        "first_failure_event": "run_end",
        "replan_count": 0,
        "replanned_after_failure": False,
        "recovered": False,
    }
    assert not dm["verification"]["gap"]  # not a success
    # 1.0 − 0.3 (final max_steps) − 0.15 (failure, no replan) − 0.05 (tool_error_count 2, final
    # not none; parse_error_count 0 costs nothing) = 0.5 < 0.65: risky
    assert dm["trace_health"] == {
        "score": 0.5,
        "grade": "risky",
        "issues": ["final_failure:max_steps", "failure_without_replan", "unrecovered_tool_errors"],
    }


def test_a_run_without_run_end_is_unknown_by_dm(tmp_path):
    killed = analyze_session(
        write(
            tmp_path / "killed.jsonl",
            dm_lines([RECOVERED[0], RECOVERED[1], _llm(1), _tool(1, "read_file", "a", "x")]),
        )
    )
    dm = killed["dm"]
    # no run_end: status "", no failure, so the final stage is the status or "unknown"
    assert (dm["status"], dm["primary_failure_stage"], dm["final_failure_stage"]) == ("", "none", "unknown")
    assert dm["duration_seconds"] is None and killed["duration_s"] is not None  # ours: timestamps
    # 1.0 − 0.4 (no run_end) − 0.3 (final unknown) = 0.3: risky
    assert dm["trace_health"] == {
        "score": 0.3,
        "grade": "risky",
        "issues": ["missing_run_end", "final_failure:unknown"],
    }
    # an llm_error then run_error: llm is the primary, and the final stage (status empty)
    steps = [RECOVERED[1], _llm(1), ("llm_error", {"step_number": 1, "error": "503"}),
             ("run_error", {"error_type": "LLMError", "message": "503"})]  # fmt: skip
    dm = analyze_session(write(tmp_path / "llm.jsonl", dm_lines(steps)))["dm"]
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("llm", "llm")
    assert dm["recovery"]["failure_event_count"] == 1  # run_error is no failure of DM's
    # 1.0 − 0.4 − 0.3 − 0.15 (failure, no replan) = 0.15
    assert dm["trace_health"]["score"] == 0.15


def test_a_failed_run_with_critic_and_tool_failures(tmp_path):
    steps = [
        RECOVERED[1], ("plan_error", {"error": "planner timed out"}),  # no failure of DM's
        ("critic_review", {"step_number": 2, "passed": False}),  # failure: critic
        ("critic_review", {"step_number": 3}),  # passed missing = passed
        _tool(3, "run_shell", None, "Tool execution failed: boom", failed=True),  # tool_execution
        _tool(4, "x", None, "Unknown tool: x", failed=True),  # tool_selection
        _tool(5, "edit_file", None, "bad tool arguments", failed=True),  # tool_arguments
        _tool(6, "run_shell", None, "AssertionError", failed=True),  # verification (by text)
        _tool(7, "run_shell", None, "nope", failed=True),  # tool
        ("run_end", {"status": "failed", "metadata": {"tool_error_count": 1, "parse_error_count": 3}}),
    ]  # fmt: skip
    dm = analyze_session(write(tmp_path / "failed.jsonl", dm_lines(steps)))["dm"]
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("critic", "critic")  # primary
    assert dm["recovery"]["failure_event_count"] == 6  # critic + five failed tool calls
    assert (dm["recovery"]["first_failure_step"], dm["recovery"]["first_failure_event"]) == (
        2,
        "critic_review",
    )
    # 1.0 − 0.3 (final critic) − 0.15 (no replan) − 0.05 (parse errors) − 0.05 (tool errors) = 0.45
    assert dm["trace_health"] == {
        "score": 0.45,
        "grade": "risky",
        "issues": ["final_failure:critic", "failure_without_replan", "unrecovered_parse_errors",
                   "unrecovered_tool_errors"],
    }  # fmt: skip
    from otel_agent_trace.offline.analysis.dm_verdicts import tool_failure_stage

    observed = [tool_failure_stage(s[1]["action"], s[1]["observation"]) for s in steps[4:9]]
    assert observed == ["tool_execution", "tool_selection", "tool_arguments", "verification", "tool"]


def test_a_legacy_file_with_a_parse_error_and_no_replan(tmp_path):
    steps = [
        ("run_start", {"schema_version": "1.2", "task": "t"}), _llm(1),
        ("parse_error", {"step_number": 1, "error": "Expecting value", "response_chars": 3}),
        _llm(2), _tool(2, "run_python", None, "ok"), _step(2, "run_python"), _step(3, "finish"),
        ("run_end", {"status": "success", "duration_seconds": 5.0, "metadata": {"parse_error_count": 1}}),
    ]  # fmt: skip
    path = write(tmp_path / "old.jsonl", dm_lines(steps, legacy=True, timestamps=[f"t{i}" for i in range(8)]))
    dm = analyze_session(path)["dm"]
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("parse", "none")
    assert dm["recovery"]["recovered"] and not dm["recovery"]["replanned_after_failure"]
    assert dm["verification"]["before_finish"] and not dm["verification"]["gap"]  # run_python 2 < finish 3
    # 1.0 − 0.15 (failure, no replan); parse_error_count costs nothing with final none: 0.85 good
    assert dm["trace_health"] == {"score": 0.85, "grade": "good", "issues": ["failure_without_replan"]}


def test_a_success_without_verification_is_a_gap(tmp_path):
    steps = [RECOVERED[1], _step(1, "finish"), _step(2, "run_tests"),
             ("run_end", {"status": "success", "duration_seconds": 1.0, "metadata": {}})]  # fmt: skip
    dm = analyze_session(write(tmp_path / "gap.jsonl", dm_lines(steps)))["dm"]
    # the only action (step 2) is after the finish (step 1): not before finish, gap
    assert dm["verification"]["before_finish"] is False and dm["verification"]["gap"] is True
    assert dm["trace_health"] == {"score": 0.8, "grade": "warning", "issues": ["verification_gap"]}


def test_a_fork_and_several_runs_in_one_file(tmp_path):
    source = dm_lines(RECOVERED)
    point = source[-1]["id"]  # forked at the run_end
    fork = dm_lines(
        [("fork", {"source": "run.jsonl", "forked_from_entry_id": point, "entry_count": len(source)})],
        run_id=RUN2,
        parent=point,
        timestamps=["2026-01-03T03:04:05+00:00"],  # a day later
    )
    result = analyze_session(write(tmp_path / "branch.jsonl", source, fork))
    assert result["dm"]["event_count"] == 39 and result["dm"]["trace_health"]["score"] == 1.0
    assert result["duration_s"] == 42.5  # the run_end's, not a day
    # two runs appended to one file (a new writer: new run id, ids from 1 again); DM judges it as one
    first = dm_lines([RECOVERED[1], _tool(1, "x", None, "Unknown tool: x", failed=True),
                      ("run_error", {"error_type": "KeyError", "message": "x"})])  # fmt: skip
    second = dm_lines(
        [("run_start", {"schema_version": "2.0", "task": "again"}), _step(1, "run_tests"), _step(2, "finish"),
         ("run_end", {"status": "success", "duration_seconds": 3.0, "metadata": {}})],
        run_id=RUN2,
    )  # fmt: skip
    dm = analyze_session(write(tmp_path / "two.jsonl", first, second))["dm"]
    assert (dm["run_id"], dm["task"], dm["status"]) == (RUN, "Fix retry.py and run tests", "success")
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("tool_selection", "none")
    assert dm["recovery"]["recovered"] is True  # a failure, and the (last) status success
    # 1.0 − 0.15 (the failure had no replan after it) = 0.85
    assert dm["trace_health"] == {"score": 0.85, "grade": "good", "issues": ["failure_without_replan"]}


def test_analyze_json_carries_dm_stages(tmp_path):
    from tests.analysis.conftest import cli

    done = cli("analyze", "--json", str(write(tmp_path / "run.jsonl", dm_lines(RECOVERED))))
    dm = json.loads(done.stdout)["dm"]
    assert (dm["primary_failure_stage"], dm["final_failure_stage"]) == ("verification", "none")


def test_an_unknown_duration_neither_breaks_diff_nor_analyze_dir(tmp_path):
    from otel_agent_trace.offline.analysis import analyze_dir, compare

    steps = [RECOVERED[1], _step(1, "finish"), ("run_end", {"status": "success", "metadata": {}})]
    untimed = write(tmp_path / "t0.jsonl", dm_lines(steps, legacy=True, timestamps=["t0", "t1", "t2"]))
    timed = write(tmp_path / "timed.jsonl", dm_lines(RECOVERED))
    metrics = compare(untimed, timed)["metrics"]
    assert "duration_s" not in metrics  # no delta to a duration nobody knows
    summary = analyze_dir(tmp_path, jobs=1)
    assert summary["unreadable"] == 0 and summary["duration_s"] == 42.5  # the known one only
