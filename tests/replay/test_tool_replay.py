"""Tool replay re-runs recorded ``@oat.tool`` calls in a workspace (a child process per call, the
replaying process never changes directory) and compares results: ok, a deliberately changed tool
is a mismatch (exit 1), tools that wrote files or ran commands are blocked unless allowed, a call
that failed originally is not re-run, and the trace tier says which calls it cannot replay."""

from __future__ import annotations

import os

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.replay import replay_tools
from otel_agent_trace.offline.replay.compare import preview_matches

from .conftest import cli


def _by_name(report):
    return {c.call.name: c for c in report.calls}


def test_checkpoint_calls_rerun_in_the_workspace_with_writes_and_commands_blocked(notes, tmp_path):
    ws = tmp_path / "ws" / "new"
    here = os.getcwd()
    report = replay_tools(
        load_session(notes.checkpoint),
        execute=True,
        workspace=ws,
        tools_from=["notes_tools"],
        import_paths=[notes.cwd],
    )
    assert os.getcwd() == here
    calls = _by_name(report)
    assert calls["count_words"].status == "ok"
    assert calls["count_words"].new_result == {"words": 11, "chars": 67}
    assert calls["write_note"].status == "blocked" and "--allow-writes" in calls["write_note"].detail
    assert calls["python_version"].status == "blocked" and "--allow-shell" in calls["python_version"].detail
    assert "its recorded run ran commands" in calls["python_version"].detail
    assert calls["divide"].status == "skipped" and "ZeroDivisionError" in calls["divide"].detail
    # read_note reads what the blocked write_note would have written: not there, so it fails.
    assert calls["read_note"].status == "error" and "FileNotFoundError" in calls["read_note"].detail
    assert ws.is_dir() and not (ws / "note.txt").exists()
    assert report.exit_code == 1


def test_allowed_writes_and_commands_run_in_the_workspace_only(notes, tmp_path):
    ws = tmp_path / "ws"
    done = cli(
        "replay", str(notes.checkpoint), "--execute-tools", "--workspace", str(ws),
        "--tools-from", "notes_tools", "--allow-writes", "--allow-shell", cwd=notes.cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {line.split()[2].rstrip(":"): line.split()[0] for line in done.stdout.splitlines()[1:-1]}
    assert lines == {
        "write_note": "ok",
        "read_note": "ok",
        "count_words": "ok",
        "python_version": "ok",
        "divide": "skipped",
    }
    assert (ws / "note.txt").read_text().startswith("Replay runs")
    assert "5 calls: 4 ok, 0 mismatch, 0 error, 0 blocked, 0 unknown, 1 skipped" in done.stdout


def test_a_changed_tool_is_a_mismatch_and_exits_1(notes, tmp_path):
    changed = tmp_path / "changed"
    changed.mkdir()
    source = (notes.cwd / "notes_tools.py").read_text()
    (changed / "notes_tools.py").write_text(source.replace('"words": len(text.split())', '"words": 0'))
    done = cli(
        "replay", str(notes.checkpoint), "--execute-tools", "--workspace", "ws",
        "--tools-from", "notes_tools", cwd=changed,
    )  # fmt: skip
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "count_words" in line)
    assert line.split()[0] == "mismatch"


def test_a_tool_that_cannot_be_imported_is_unknown(notes, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    done = cli(
        "replay", str(notes.checkpoint), "--execute-tools", "--workspace", "ws",
        "--tools-from", "notes_tools", cwd=bare,
    )  # fmt: skip
    line = next(line for line in done.stdout.splitlines() if "count_words" in line)
    assert line.split()[0] == "unknown" and "No module named 'notes_tools'" in line


def test_the_trace_tier_compares_previews_and_says_what_it_cannot_replay(notes, tmp_path):
    report = replay_tools(
        load_session(notes.trace),
        execute=True,
        workspace=tmp_path / "ws",
        tools_from=["notes_tools"],
        allow_writes=True,
        allow_shell=True,
        import_paths=[str(notes.cwd)],
    )
    calls = _by_name(report)
    assert calls["count_words"].status == "ok"
    assert report.tier == "trace"
    # an argument the trace tier redacted cannot be replayed, and says why
    session = load_session(notes.trace)
    call = next(c for c in session.spans if c.name == "execute_tool count_words")
    call.content["tool_arguments"] = {"text": "<redacted:env:OPENAI_API_KEY>"}
    from otel_agent_trace.offline.replay.tools import recorded_calls, why_not_replayable

    (counted,) = [c for c in recorded_calls(session) if c.name == "count_words"]
    assert "trace tier: an argument was redacted" in why_not_replayable(counted, "trace")


def test_redaction_markers_and_cut_previews_are_not_differences():
    assert preview_matches("token <redacted:openai_key> ok", "token sk-abc123 ok")
    assert preview_matches("abcdef…[+10 chars]", "abcdef0123456789")
    assert not preview_matches("abcdef…[+10 chars]", "abXdef0123456789")
    assert preview_matches({"a": "x <redacted:key:password> y", "n": 1}, {"a": "x hunter2 y", "n": 1})
    assert not preview_matches({"a": "x", "n": 1}, {"a": "x", "n": 2})
    assert preview_matches('{"chars":67,…[+12 chars]', {"words": 11, "chars": 67})  # canonical JSON, cut
