"""Hand-written session files for what recording rarely gives: a crash-cut last line, an empty
file, spans left unfinished at stop, fields of the wrong type, values carrying escape sequences,
a long file read in bounded memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.analysis import analyze_session, compare, report
from tests.analysis.conftest import cli

ROOT = {
    "id": "abcd0000-0000",
    "parent_id": "",
    "type": "session.start",
    "layer": "agent",
    "ts": 1_000_000_000_000_000_000,
    "session_id": "session-20260101-000000-abcd0000",
    "tier": "trace",
    "metadata": {"format_version": "1.1", "argv": ["agent.py"]},
}


def _span(n: int, name: str, layer: str, *, parent: str = "abcd0000-0000", end: bool = True, **extra):
    entry = {
        "id": f"abcd0000-{n:04d}",
        "parent_id": parent,
        "type": "span.end" if end else "span.start",
        "layer": layer,
        "ts": ROOT["ts"] + n * 1_000_000,
        "name": name,
        "kind": "INTERNAL",
        "trace_id": "0" * 32,
        "span_id": f"{n:016x}",
        "parent_span_id": None,
        "attributes": {},
    }
    if end:
        entry.update(duration_ns=500_000, status={"code": "UNSET"})
    entry.update(extra)
    return entry


def _write(path: Path, entries, tail: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + tail)
    return path


def _tool(n: int, tool: str, args, **extra):
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    extra.setdefault("content", {"tool_arguments": args})
    return _span(n, f"execute_tool {tool}", "tool", attributes=attrs, **extra)


def test_crash_cut_last_line(tmp_path):
    agent = _span(
        1, "invoke_agent a", "agent", end=False, attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    path = _write(
        tmp_path / "cut.jsonl", [ROOT, agent, _tool(2, "read", {"p": 1})], tail='{"id": "abcd0000-0003", "ty'
    )
    result = analyze_session(path)
    assert result["status"] == "incomplete" and result["failure"]["final_stage"] == "sys"
    assert result["issue_count"] == 1 and "cut.jsonl:4" in result["issues"][0]
    assert result["unfinished"]["spans"][0]["name"] == "invoke_agent a"
    assert result["counts"]["tool_calls"] == 1
    with pytest.raises(fmt.SessionFormatError):
        analyze_session(_write(tmp_path / "bad.jsonl", [ROOT], tail="not json\n{}\n"), strict=True)


def test_empty_file_is_bad_input(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    done = cli("analyze", str(empty))
    assert done.returncode == 2 and "empty.jsonl" in done.stderr
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    assert cli("report", str(blank)).returncode == 2
    assert cli("analyze", str(tmp_path / "missing.jsonl")).returncode == 2


def test_spans_unfinished_at_stop(tmp_path):
    start = _span(
        1, "execute_tool slow", "tool", end=False, attributes={"gen_ai.operation.name": "execute_tool"}
    )
    end = {
        "id": "abcd0000-0002",
        "parent_id": "abcd0000-0000",
        "type": "session.end",
        "layer": "agent",
        "ts": ROOT["ts"] + 5_000_000_000,
        "duration_ns": 5_000_000_000,
        "unfinished_spans": 1,
    }
    result = analyze_session(_write(tmp_path / "u.jsonl", [ROOT, start, end]))
    assert result["complete"] and result["status"] == "failed"
    assert result["unfinished"]["count"] == 1 and result["duration_s"] == 5.0
    assert "1 spans were unfinished" in " ".join(result["health"]["reasons"])


def test_fields_of_the_wrong_type_do_not_break_analysis(tmp_path):
    """A field of ours of the wrong type is a bad line, skipped and counted (named by file and
    line); an attribute the analysis interprets, of the wrong type, is read as absent (the rule of
    docs/session-format.md, "Reading rules")."""
    odd = [
        ROOT | {"metadata": ["not", "a", "dict"], "ts": "NaN"},
        _span(1, "x", "tool", attributes=["list"], status="ERROR", duration_ns="long"),
        _span(
            2,
            "y",
            "agent",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": "many",
                "gen_ai.response.finish_reasons": "stop",
            },
        ),
        _span(3, "z", "sys", attributes={"process.command_args": 42, "process.exit.code": "1"}),
        _span(5, "w", "agent", span_id=["a"]),
        {"id": "e", "type": "span.event", "layer": "sys", "name": "file.open", "attributes": None},
        {"id": "abcd0000-0006", "parent_id": "", "type": "message", "layer": "agent", "ts": ROOT["ts"] + 6}
        | {"role": "assistant", "content": {"parts": [1]}, "tool_calls": None},
        {"type": None},
        _tool(4, "t", {"deep": [{"x": float("1e308")}]}),
        _tool(7, "t", {}, content="not a dict"),
    ]
    result = analyze_session(_write(tmp_path / "odd.jsonl", odd))
    assert result["counts"]["spans"] == 3 and result["counts"]["model_calls"] == 1
    assert result["tokens"]["input"] == 0  # "many": as if absent
    assert result["final_answer"]["text"] == '{"parts":[1]}'
    assert result["issue_count"] == 6
    assert [issue.split(": ", 1)[0] for issue in result["issues"]] == [
        f"{tmp_path / 'odd.jsonl'}:{line}" for line in (1, 2, 5, 6, 8, 10)
    ]
    assert cli("report", str(tmp_path / "odd.jsonl")).returncode == 0
    assert compare(tmp_path / "odd.jsonl", tmp_path / "odd.jsonl")["different"] is False
    with pytest.raises(fmt.SessionFormatError, match=r"odd\.jsonl:1: 'ts' is 'NaN', not a number"):
        analyze_session(tmp_path / "odd.jsonl", strict=True)


def test_escape_sequences_never_reach_the_terminal(tmp_path):
    evil = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07"
    entries = [
        ROOT | {"session_id": f"s{evil}"},
        _tool(1, f"read{evil}", {"p": 1}, status={"code": "ERROR", "description": f"bad{evil}"}),
        _tool(2, f"read{evil}", {"p": 1}),
        _tool(3, f"read{evil}", {"p": 1}),
        {
            "id": "m",
            "parent_id": "abcd0000-0000",
            "type": "message",
            "layer": "agent",
            "role": "assistant",
            "content": f"answer{evil}\nline two",
        },
    ]
    path = _write(tmp_path / "evil.jsonl", entries)
    for args in (
        ["analyze", str(path)],
        ["report", str(path)],
        ["diff", str(path), str(path)],
        ["analyze-dir", str(tmp_path)],
    ):
        done = cli(*args)
        assert done.returncode in (0, 1), done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout, args
        assert "\\x1b" in done.stdout or args[0] in ("analyze-dir", "diff")
    text = report(path)
    assert "\x1b" not in text and "<" not in text.replace("&lt;", "")


def test_markdown_cannot_be_injected(tmp_path):
    entries = [ROOT, _tool(1, "x | <script>alert(1)</script> [link](http://e)", {"a": 1})]
    text = report(_write(tmp_path / "md.jsonl", entries))
    row = next(line for line in text.splitlines() if "script" in line)
    assert "<script>" not in row and "&lt;script&gt;" in row
    assert "\\| &lt;" in row and "\\[link\\]" in row


def test_long_session_in_bounded_memory(tmp_path):
    """A 60 MB session: the analysis keeps counters and open spans, not entries."""
    path = tmp_path / "long.jsonl"
    agent = _span(
        1, "invoke_agent a", "agent", end=False, attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    with open(path, "w") as out:
        out.write(json.dumps(ROOT) + "\n" + json.dumps(agent) + "\n")
        for n in range(2, 120_000):
            out.write(json.dumps(_tool(n, f"tool{n % 7}", {"i": n, "pad": "x" * 400})) + "\n")
    assert path.stat().st_size > 55_000_000
    code = textwrap.dedent(
        f"""
        import resource, sys
        from otel_agent_trace.offline.analysis import analyze_session
        result = analyze_session({str(path)!r})
        assert result["counts"]["tool_calls"] == 119_998, result["counts"]
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout) / 1024
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, otel_agent_trace.offline.analysis;"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert peak_mb - int(baseline.stdout) / 1024 < 40, peak_mb  # the file is 60 MB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


def test_child_process_files_belong_to_their_session(tmp_path):
    """``<session>.p<pid>.jsonl`` is read after its parent's file, by analyze and analyze-dir."""
    from otel_agent_trace.offline.analysis import analyze_dir

    sid = ROOT["session_id"]
    agent = _span(
        1, "invoke_agent a", "agent", end=False, attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    end = {
        "id": "abcd0000-0003",
        "parent_id": "abcd0000-0000",
        "type": "session.end",
        "layer": "agent",
        "ts": ROOT["ts"] + 9_000_000,
        "duration_ns": 9_000_000,
        "unfinished_spans": 0,
    }
    agent_end = _span(
        2,
        "invoke_agent a",
        "agent",
        span_id=agent["span_id"],
        attributes={"gen_ai.operation.name": "invoke_agent"},
    )
    _write(tmp_path / f"{sid}.jsonl", [ROOT, agent, agent_end, end])
    join = ROOT | {
        "id": "beef0000-0000",
        "type": "session.join",
        "metadata": {"parent_span_id": agent["span_id"]},
    }
    child_end = end | {"id": "beef0000-0002", "parent_id": "beef0000-0000"}
    _write(tmp_path / f"{sid}.p4242.jsonl", [join, _tool(7, "child_tool", {"x": 1}), child_end])
    result = analyze_session(tmp_path / f"{sid}.jsonl")
    assert result["files"] == 2 and result["latency"]["by_tool"]["child_tool"]["count"] == 1
    assert result["status"] == "ok"
    summary = analyze_dir(tmp_path)
    assert summary["sessions"] == 1 and summary["tools"]["child_tool"]["calls"] == 1
