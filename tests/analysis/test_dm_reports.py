# ruff: noqa: E501  (DM entries are laid out one a line, as DM writes them)
"""What a DM-Code-Agent user reads of DM files, in DM's terms (``/work/shared/REFERENCE.md`` §9):
``analyze`` prints DM's own verdicts, ``analyze-dir`` (text, ``--json``, ``--markdown``) adds DM's
directory summary — health counts, recovery rate, hallucination signals, final stages, a row per
trace — and ``list`` takes a run's status and duration from its last ``run_end``. Files made as
DM's writer makes them (:mod:`.test_dm_verdicts`): every event type of DM's list, both tiers,
pre-2.0, a fork, several runs in one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.fork import fork_session
from tests.cli.helpers import cli
from tests.offline.test_dm_checkpoints import STEPS

from .test_dm_verdicts import RECOVERED, RUN, RUN2, _llm, _step, _tool, dm_lines, write

MAX_STEPS = [
    RECOVERED[0], RECOVERED[1], _llm(1), _tool(1, "read_file", "a.py", "文件 a.py 不存在。"), _step(1, "read_file"),
    ("run_end", {"status": "max_steps_exceeded", "duration_seconds": 30.0, "final_answer": "", "metadata": {"tool_error_count": 2}}),
]  # fmt: skip
KILLED = [RECOVERED[0], RECOVERED[1], _llm(1), _tool(1, "run_tests", None, "returncode: 1", failed=True)]
SECRET_TASK = "Fix retry.py and run tests"  # the prompt: never in a shareable summary


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    """A directory as DM's bench leaves it: a recovered run (trace tier), the same run's checkpoint
    file, a max-steps run, a killed run, a pre-2.0 file of DM's test timestamps, and a fork."""
    d = tmp_path / "traces"
    d.mkdir()
    write(d / "recovered.jsonl", dm_lines(RECOVERED))
    write(d / "recovered-checkpoint.jsonl", dm_lines(STEPS, run_id=RUN2))
    write(d / "max.jsonl", dm_lines(MAX_STEPS, run_id="a" * 32))
    write(d / "killed.jsonl", dm_lines(KILLED, run_id="b" * 32))
    untimed = [f"t{i}" for i in range(len(RECOVERED))]
    write(d / "legacy.jsonl", dm_lines(RECOVERED, run_id="c" * 32, legacy=True, timestamps=untimed))
    fork_session(load_session(d / "recovered.jsonl"), f"{RUN[:8]}-0026")  # after the failure, before the end
    return d


def test_analyze_prints_dms_own_verdicts(traces):
    done = cli("analyze", str(traces / "recovered.jsonl"))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    head = text.index("DM-Code-Agent's own analysis")
    dm = text[head:].splitlines()
    assert dm[1:] == [
        f"  task: {SECRET_TASK}",
        "  status: success; duration_seconds (run_end): 42.50s",
        "  primary failure stage: verification; final failure stage: none",
        "  recovery: failures=2, replans=1, replanned_after_failure=yes, recovered=yes",
        "  verification: actions=2, before_finish=yes, gap=no",
        "  hallucination signals: edit_without_read=1, guard_blocks=1, truncations=1, missing_paths=1",
        "  trace health: good (1.00)",
    ]
    done = cli("analyze", str(traces / "max.jsonl"))
    assert done.returncode == 1
    assert "  primary failure stage: max_steps; final failure stage: max_steps" in done.stdout
    assert (
        "  trace health: risky (0.50); issues: final_failure:max_steps, failure_without_replan, unrecovered_tool_errors"
        in done.stdout
    )
    done = cli("analyze", str(traces / "killed.jsonl"))
    assert "  status: (no run_end); duration_seconds (run_end): none recorded" in done.stdout
    assert (
        "  trace health: risky (0.15); issues: missing_run_end, final_failure:verification, failure_without_replan"
        in done.stdout
    )


def test_analyze_dir_gives_dms_directory_summary(traces):
    done = cli("analyze-dir", str(traces), "--json", "--jobs", "1")
    summary = json.loads(done.stdout)
    assert summary["sessions"] == 6 and summary["unreadable"] == 0
    # recovered, its checkpoint file, the pre-2.0 copy and the fork (which ends before run_end)
    # failed then (all but the fork) recovered; max-steps and killed failed for good
    assert summary["dm"] == {
        "total_files": 6,
        "analyzed_traces": 6,
        "error_count": 0,
        "verification_gap_count": 0,
        "runs_with_failures": 6,  # every run failed once (max steps: its synthetic failure)
        "recovered_runs": 3,
        "recovery_success_rate": 0.5,
        "hallucination_signals": {
            "edit_without_read_count": 4,  # one in each of the four copies of the recovered run
            "edit_guard_blocks": 4,
            "truncation_hits": 4,
            "missing_path_reference_count": 5,  # and the max-steps run's missing a.py
        },
        "trace_health_counts": {"good": 3, "risky": 3},
        "primary_failure_stage_counts": {"max_steps": 1, "verification": 5},
        "final_failure_stage_counts": {"max_steps": 1, "none": 3, "verification": 2},
    }
    rows = {r["file"]: r["dm"] for r in summary["rows"]}
    assert rows["max.jsonl"] == {
        "status": "max_steps_exceeded",
        "grade": "risky",
        "score": 0.5,
        "primary_failure_stage": "max_steps",
        "final_failure_stage": "max_steps",
        "verification_gap": False,
        "replan_count": 0,
    }
    fork = next(name for name in rows if ".fork-" in name)
    assert rows[fork]["status"] == "" and rows[fork]["final_failure_stage"] == "verification"
    text = cli("analyze-dir", str(traces), "--jobs", "1").stdout
    assert (
        "DM-Code-Agent's own analysis of 6 DM files (its rules): verification gaps 0; recovery 3/6 (50.0%)"
        in text
    )
    assert "  trace health: good 3, risky 3" in text


def test_analyze_dir_markdown_has_dms_sections_and_no_content(traces, tmp_path):
    out = tmp_path / "trace-analysis.md"
    done = cli("analyze-dir", str(traces), "--markdown", str(out), "--jobs", "1")
    assert done.returncode == 1, done.stderr  # runs that failed: findings
    text = out.read_text()
    dm = text[text.index("## DM-Code-Agent trace analysis") :]
    for line in (
        "- Traces analyzed: `6/6`",
        "- Errors: `0`",
        "- Verification gaps: `0`",
        "### Trace Health",
        "- `good`: `3`",
        "- `risky`: `3`",
        "- Recovery success rate: `50.0%` (`3/6`)",
        "- Edits without a prior read: `4`",
        "- Edit-guard blocks: `4`",
        "- Truncated observations: `4`",
        "- Missing-path references: `5`",
        "### Final Failure Stages",
        "- `max_steps`: `1`",
        "- `none`: `3`",
        "- `verification`: `2`",
        "| `max.jsonl` | `max_steps_exceeded` | `risky` (0.5) | `max_steps` | no | 0 |",
        "| `recovered.jsonl` | `success` | `good` (1.0) | `none` | no | 1 |",
        "| `killed.jsonl` | `` | `risky` (0.15) | `verification` | no | 0 |",
    ):
        assert line in dm.splitlines(), line
    assert len([r for r in dm.splitlines() if r.startswith("| `")]) == 6  # a row per trace
    assert SECRET_TASK not in text and "不存在" not in text  # no prompt, no observation


def test_list_takes_a_runs_status_and_duration_from_its_last_run_end(traces):
    listed = {s["files"][0]: s for s in json.loads(cli("list", "--json", str(traces)).stdout)["sessions"]}
    assert (listed["recovered.jsonl"]["status"], listed["recovered.jsonl"]["duration_s"]) == ("success", 42.5)
    assert listed["recovered.jsonl"]["complete"] is True
    assert (listed["max.jsonl"]["status"], listed["max.jsonl"]["duration_s"]) == ("max_steps_exceeded", 30.0)
    killed = listed["killed.jsonl"]
    assert killed["complete"] is False and killed["duration_s"] is None and "status" not in killed
    legacy = listed["legacy.jsonl"]  # "t0": no start time, the run's own duration all the same
    assert legacy["started"] is None and (legacy["status"], legacy["duration_s"]) == ("success", 42.5)
    fork = next(s for name, s in listed.items() if ".fork-" in name)
    assert fork["complete"] is False and fork["session_id"] != RUN  # a session of its own
    rows = cli("list", str(traces)).stdout.splitlines()
    assert any("max_steps_exceeded" in r and "30.00s" in r for r in rows)
    assert any(r.startswith(RUN2) and "success" in r and "42.50s" in r for r in rows)


def test_list_ignores_a_fork_entry_a_day_later(tmp_path):
    # the fork entry's timestamp is a day after the run: the run still lasted run_end's 42.5 s
    lines = dm_lines(RECOVERED)
    fork = dm_lines([("fork", {"source": "x.jsonl", "forked_from_entry_id": lines[-1]["id"], "entry_count": len(lines)})],
                    run_id=RUN2, timestamps=["2026-01-03T03:04:05+00:00"], parent=lines[-1]["id"])  # fmt: skip
    path = write(tmp_path / "x.fork-1.jsonl", lines, fork)
    (row,) = json.loads(cli("list", "--json", str(tmp_path)).stdout)["sessions"]
    assert (row["status"], row["duration_s"]) == ("success", 42.5)
    assert load_session(path).duration == 42.5
