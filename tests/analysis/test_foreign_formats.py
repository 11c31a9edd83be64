"""``analyze``, ``diff`` and ``report`` of DevDuck session ZIPs and DM-Code-Agent JSONL sessions,
written as their own code writes them (``/work/shared/REFERENCE.md`` §1, ``tests/offline/samples``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_agent_trace.offline.analysis import analyze_session, compare, report
from tests.analysis.conftest import cli
from tests.offline import samples


def _dm(path: Path, steps: list[tuple[str, dict[str, Any]]], legacy: bool = False) -> Path:
    """A DM-Code-Agent session of these ``(event, payload)`` steps, one second apart."""
    lines = []
    for seq, (event, payload) in enumerate(steps):
        entry: dict[str, Any] = {}
        if not legacy:
            entry["id"] = f"{samples.RUN_ID[:8]}-{seq:04d}"
            entry["parent_id"] = f"{samples.RUN_ID[:8]}-{seq - 1:04d}" if seq else ""
        entry.update(
            timestamp=f"2024-02-03T15:{10 + seq // 60:02d}:{seq % 60:02d}.250000+00:00",
            run_id=samples.RUN_ID,
            event=event,
            payload=payload,
        )
        lines.append(json.dumps(entry) + "\n")
    path.write_text("".join(lines))
    return path


def _devduck_event(second: float, layer: str, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp_ns": samples.T0 + int(second * samples.SECOND),
        "layer": layer,
        "event_type": kind,
        "data": data,
        "trace_id": None,
    }


RECOVERING_DM = [
    ("runtime", {"provider": "deepseek", "model": "deepseek-chat", "cli": "dm-agent"}),
    ("run_start", {"task": "Fix retry.py", "cwd": "/w", "tools": ["read_file", "edit_file", "run_tests"]}),
    ("message", {"role": "user", "kind": "task", "content": "Fix retry.py"}),
    ("llm_call", {"message_count": 1, "usage": {"prompt_tokens": 120, "completion_tokens": 30}}),
    ("parse_error", {"error": "JSONDecodeError: Expecting value", "context_replacement": "[omitted]"}),
    ("llm_call", {"message_count": 3, "prompt_tokens": 200, "completion_tokens": 40, "duration_ms": 1500}),
    ("tool_call", {"action": "edit_file", "action_input": {"path": "retry.py"}, "observation": "ok"}),
    ("file_backup", {"path": "retry.py"}),
    ("tool_call", {"action": "run_tests", "action_input": {}, "observation": "1 failed", "failure": True}),
    ("replan", {"reason": "tests failed", "steps": ["fix the off-by-one"]}),
    ("llm_call", {"message_count": 5, "prompt_tokens": 260, "completion_tokens": 20}),
    (
        "tool_call",
        {"action": "edit_file", "action_input": {"path": "retry.py", "line": 3}, "observation": "ok"},
    ),
    ("tool_call", {"action": "run_tests", "action_input": {}, "observation": "3 passed", "failure": False}),
    ("tool_call", {"action": "run_python", "action_input": {"code": "import retry"}, "observation": ""}),
    ("checkpoint", {"step": 4, "messages": [{"role": "user", "content": "Fix retry.py"}]}),
    ("run_end", {"status": "success", "final_answer": "retry.py fixed; tests pass", "duration": 12.5}),
]


def test_dm_session_analysed(tmp_path):
    result = analyze_session(_dm(tmp_path / "run.jsonl", RECOVERING_DM))
    assert result["format"] == "dm-code-agent"
    assert result["session_id"] == samples.RUN_ID
    assert result["status"] == "ok" and result["complete"]
    assert result["final_answer"]["text"] == "retry.py fixed; tests pass"
    counts = result["counts"]
    assert (counts["model_calls"], counts["tool_calls"], counts["snapshots"]) == (3, 5, 1)
    assert result["tokens"]["input"] == 120 + 200 + 260 and result["tokens"]["output"] == 90
    assert list(result["tokens"]["by_model"]) == ["deepseek-chat"]
    assert result["latency"]["by_model"]["deepseek-chat"]["max_s"] == 1.5
    failure = result["failure"]
    assert failure["primary_stage"] == "parse"  # the first response did not parse
    assert failure["by_stage"] == {"parse": 1, "tool": 1, "verification": 1}
    assert failure["final_stage"] is None  # every failure was followed by a success
    recovery = result["recovery"]
    assert recovery["replans"] == 1 and recovery["later_attempt_succeeded"] and recovery["recovered"]
    assert recovery["unrecovered"] == []
    assert result["verification"]["by_kind"] == {
        "run": {"runs": 1, "passed": 1},
        "test": {"runs": 2, "passed": 1},
    }
    assert result["verification"]["files_written"] == 1
    assert not result["verification"]["writes_after_last_verification"]
    assert result["health"]["grade"] == "good", result["health"]


def test_dm_failed_run_and_legacy_file(tmp_path):
    steps = [
        ("run_start", {"task": "t"}),
        ("llm_call", {"message_count": 1}),
        (
            "tool_call",
            {
                "action": "run_shell",
                "action_input": {"command": "pytest -q"},
                "observation": "E",
                "failure": True,
            },
        ),
        ("run_end", {"status": "max_steps", "final_answer": None, "duration": 3}),
    ]
    for legacy in (False, True):
        result = analyze_session(_dm(tmp_path / f"failed-{legacy}.jsonl", steps, legacy=legacy))
        assert result["status"] == "failed"
        assert result["failure"]["final_stage"] == "limits"  # max_steps
        assert result["failure"]["primary_stage"] == "tool"
        assert result["verification"]["by_kind"] == {"test": {"runs": 1, "passed": 0}}  # its command
        assert result["health"]["grade"] == "risky"
        first = result["failure"]["first"]["entry_id"]
        assert first.startswith("legacy-") if legacy else first.startswith(samples.RUN_ID[:8])
    error = analyze_session(
        _dm(tmp_path / "error.jsonl", [("run_start", {}), ("run_error", {"error": "boom"})])
    )
    assert error["status"] == "failed" and error["failure"]["final_stage"] == "sys"


def test_dm_cut_short_is_incomplete(tmp_path):
    path = _dm(tmp_path / "cut.jsonl", RECOVERING_DM[:9])
    with path.open("a") as f:
        f.write('{"id": "a1b2c3d4-0009", "event": "llm_ca')  # the writer died mid-line
    result = analyze_session(path)
    assert result["status"] == "incomplete" and not result["complete"]
    assert result["unfinished"]["count"] == 1  # the run
    assert result["issue_count"] == 1


def test_devduck_session_analysed(tmp_path):
    result = analyze_session(samples.write_devduck_zip(tmp_path / "duck.zip"))
    assert result["format"] == "devduck"
    assert result["session_id"] == "session-20240203-151052"
    assert result["status"] == "ok" and result["complete"] and result["duration_s"] == 10.0
    counts = result["counts"]
    assert (counts["tool_calls"], counts["http_requests"], counts["messages"], counts["snapshots"]) == (
        1,
        1,
        2,
        1,
    )
    assert counts["sys_events"] == {"file.open": 5}
    assert result["latency"]["by_tool"]["shell"]["max_s"] == 1.0
    assert set(result["latency"]["by_layer"]) == {"tool", "sys"}
    assert result["final_answer"]["text"] == "Found 3 issues"  # the last assistant message's preview
    assert result["failure"]["count"] == 0


def test_devduck_failures_by_layer(tmp_path):
    events = [
        _devduck_event(0, "agent", "session.start", {"session_id": "duck-2"}),
        _devduck_event(1, "tool", "tool.call", {"name": "shell", "args": {"command": "make build"}}),
        _devduck_event(1.1, "sys", "file.open", {"path": "out.txt", "mode": "w"}),
        _devduck_event(1.2, "sys", "process.run", {"command": ["make", "build"], "returncode": 2}),
        _devduck_event(1.5, "sys", "http.get", {"url": "https://api.example.invalid/v1", "status_code": 503}),
        _devduck_event(
            2,
            "tool",
            "tool.result",
            {"name": "shell", "result_preview": "Error: make failed", "status": "error", "duration_ms": 1000},
        ),
        _devduck_event(3, "tool", "tool.call", {"name": "shell", "args": {"command": "make build"}}),
        _devduck_event(
            4, "tool", "tool.result", {"name": "shell", "result_preview": "built", "duration_ms": 900}
        ),
        _devduck_event(
            5, "agent", "message", {"role": "assistant", "content_preview": "Built after a retry"}
        ),
        _devduck_event(6, "agent", "session.stop", {"duration": 6.0, "events": 9}),
    ]
    result = analyze_session(samples.write_devduck_zip(tmp_path / "duck.zip", events))
    assert result["failure"]["by_stage"] == {"sys": 2, "tool": 1}
    assert result["failure"]["primary_stage"] == "sys"
    assert result["counts"]["processes"] == 1 and result["counts"]["http_requests"] == 1
    assert result["verification"]["files_written"] == 1
    assert result["recovery"]["retried_ok"] == 1  # the shell tool succeeded the second time
    assert sorted(result["recovery"]["unrecovered"]) == ["http:api.example.invalid", "sys:make"]
    assert result["latency"]["by_tool"]["shell"] == {
        "count": 2,
        "errors": 1,
        "total_s": 1.9,
        "mean_s": 0.95,
        "max_s": 1.0,
    }


def test_diff_and_report_of_foreign_sessions(tmp_path):
    dm_a = _dm(tmp_path / "a.jsonl", RECOVERING_DM)
    dm_b = samples.write_dm(tmp_path / "b.jsonl")
    result = compare(dm_b, dm_a)
    assert result["metrics"]["tool_calls"] == {"base": 2, "candidate": 5, "delta": 3}
    assert result["final_answer_changed"]
    assert result["tool_usage"]["delta"]["edit_file"] == {"base": 0, "candidate": 2, "delta": 2}
    text = report(dm_a)
    assert "retry.py fixed; tests pass" in text
    assert "| tool | run\\_tests |" in text and "| model | deepseek-chat |" in text
    assert "| working directory | /w |" in text
    duck = report(samples.write_devduck_zip(tmp_path / "duck.zip"))
    assert "| tool | shell |" in duck and "Found 3 issues" in duck


def test_cli_on_foreign_sessions(tmp_path):
    dm = _dm(tmp_path / "run.jsonl", RECOVERING_DM)
    duck = samples.write_devduck_zip(tmp_path / "duck.zip")
    done = cli("analyze", "--json", str(dm))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["tool_calls"] == 5
    shown = cli("analyze", str(duck))
    assert shown.returncode == 0, shown.stderr
    assert "shell" in shown.stdout
    differ = cli("diff", str(dm), str(duck))
    assert differ.returncode == 1, differ.stderr  # different runs
    written = cli("report", str(dm))
    assert written.returncode == 0 and "# Session report" in written.stdout


def test_analyze_dir_mixes_formats(tmp_path):
    from otel_agent_trace.offline.analysis import analyze_dir

    _dm(tmp_path / "run.jsonl", RECOVERING_DM)
    samples.write_devduck_zip(tmp_path / "duck.zip")
    summary = analyze_dir(tmp_path, jobs=1)
    rows = {row["file"]: row for row in summary["rows"]}
    assert set(rows) == {"run.jsonl", "duck.zip"}, summary
    assert summary["tools"]["run_tests"] == {"calls": 2, "errors": 1, "sessions": 1}
    assert rows["run.jsonl"]["tool_calls"] == 5 and rows["duck.zip"]["tool_calls"] == 1


# --- fuzzing: odd payloads never break the analysis -------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from otel_agent_trace import session_format as fmt  # noqa: E402

values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
DM_EVENTS = [
    "runtime", "run_start", "message", "llm_call", "tool_call", "parse_error", "plan_error", "replan",
    "checkpoint", "file_backup", "step", "run_end", "run_error", "compaction",
]  # fmt: skip
DM_KEYS = [
    "model", "provider", "usage", "prompt_tokens", "completion_tokens", "duration", "duration_ms", "error",
    "action", "action_input", "observation", "failure", "status", "final_answer", "role", "content", "path",
]  # fmt: skip
DUCK_EVENTS = [
    "session.start", "message", "tool.call", "tool.result", "tool.error", "file.open", "file.write",
    "http.get", "http.post", "process.run", "snapshot.created", "session.stop", "other.thing",
]  # fmt: skip
DUCK_KEYS = [
    "name", "args", "result_preview", "duration_ms", "error", "status", "success", "path", "mode", "url",
    "method", "status_code", "command", "returncode", "duration", "session_id", "role", "content_preview",
]  # fmt: skip
payloads = st.dictionaries(st.sampled_from(DM_KEYS), values, max_size=6)
duck_data = st.dictionaries(st.sampled_from(DUCK_KEYS), values, max_size=6)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _exercise(path: Path, tmp: Path) -> None:
    from otel_agent_trace.offline.html import write_html

    for call in (
        lambda: analyze_session(path),
        lambda: report(path),
        lambda: compare(path, path),
        lambda: write_html(path, tmp / "page.html"),
    ):
        try:
            call()
        except fmt.SessionFormatError:
            pass


@FUZZ
@given(steps=st.lists(st.tuples(st.sampled_from(DM_EVENTS), payloads), min_size=1, max_size=12))
def test_fuzzed_dm_sessions(tmp_path, steps):
    _exercise(_dm(tmp_path / "fuzz.jsonl", steps), tmp_path)


@FUZZ
@given(
    events=st.lists(
        st.tuples(st.sampled_from(DUCK_EVENTS), st.sampled_from(["agent", "tool", "sys"]), duck_data),
        min_size=1,
        max_size=12,
    )
)
def test_fuzzed_devduck_sessions(tmp_path, events):
    made = [_devduck_event(n, layer, kind, data) for n, (kind, layer, data) in enumerate(events)]
    _exercise(samples.write_devduck_zip(tmp_path / "fuzz.zip", made), tmp_path)
