"""Two tiers of one recording: what each keeps, their own id sequences, their paths and modes."""

from __future__ import annotations

import logging
import os
import stat
import zipfile
from pathlib import Path

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.genai_spans import record_content
from otel_agent_trace.recording.tiers import file_tier
from otel_agent_trace.settings import Settings, SettingsError

SECRET = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"
LONG_RESULT = "line of output\n" * 400 + f"token={SECRET}\n"


def _entries(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _record_run() -> None:
    """Spans with messages, tool I/O and snapshots, as an instrumented agent produces them."""
    conversation = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": f"use key {SECRET} please"},
    ]
    with oat.agent("coder") as agent:
        with oat.tool("shell", arguments={"cmd": "ls", "api_key": "plain-k-1"}) as call:
            call.set_result(LONG_RESULT)
        record_content(
            agent.span,
            input_messages=conversation,
            output_messages=[{"role": "assistant", "content": "done"}],
        )
        oat.snapshot("first", messages=conversation, state={"password": "plain-p-2", "step": 1})
        oat.snapshot("second", messages=[*conversation, {"role": "assistant", "content": "done"}])


def test_both_tiers_from_the_same_spans_each_with_its_own_ids(provider, session_dir):
    s = oat.session("two", directory=session_dir, tier="both").start()
    _record_run()
    trace_file, checkpoint_file = s.files
    zips = [Path(z) for z in s.stop()]
    files = {"trace": _entries(trace_file), "checkpoint": _entries(checkpoint_file)}

    prefixes = {tier: {e["id"].rsplit("-", 1)[0] for e in entries} for tier, entries in files.items()}
    assert all(len(p) == 1 for p in prefixes.values()) and prefixes["trace"] != prefixes["checkpoint"]
    assert [e["type"] for e in files["trace"]] == [e["type"] for e in files["checkpoint"]]
    for tier, entries in files.items():
        ids = {e["id"] for e in entries}
        messages = {e["id"]: e for e in entries if e["type"] == fmt.MESSAGE}
        assert all(e["parent_id"] in ids for e in entries[1:]), tier
        end = next(e for e in entries if e["type"] == fmt.SPAN_END and e["name"] == "invoke_agent coder")
        referenced = end["content"]["input_message_ids"] + end["content"]["output_message_ids"]
        snapshots = [e for e in entries if e["type"] == fmt.SNAPSHOT]
        referenced += [i for snap in snapshots for i in snap["message_ids"]]
        assert referenced and all(i in messages for i in referenced), f"{tier}: a reference outside the file"
        assert [messages[i]["role"] for i in snapshots[1]["message_ids"]] == ["system", "user", "assistant"]
        assert len(messages) == 3, "each message once per file"
        assert (
            entries[0]["tier"] == tier
            and file_tier(trace_file if tier == "trace" else checkpoint_file) == tier
        )

    # Checkpoint: complete. Trace: hashes, bounded and redacted previews.
    full = {e["role"]: e for e in files["checkpoint"] if e["type"] == fmt.MESSAGE}
    short = {e["role"]: e for e in files["trace"] if e["type"] == fmt.MESSAGE}
    assert full["user"]["content"] == f"use key {SECRET} please"
    assert "content" not in short["user"]
    assert (
        short["user"]["content_sha256"]
        == full["user"]["content_sha256"]
        == fmt.content_sha256(full["user"]["content"])
    )
    tool_full = next(
        e for e in files["checkpoint"] if e["type"] == fmt.SPAN_END and e["name"] == "execute_tool shell"
    )
    tool_short = next(
        e for e in files["trace"] if e["type"] == fmt.SPAN_END and e["name"] == "execute_tool shell"
    )
    assert tool_full["content"]["tool_result"] == LONG_RESULT
    assert tool_full["content"]["tool_arguments"] == {"cmd": "ls", "api_key": "plain-k-1"}
    assert tool_short["content"]["tool_arguments"] == {"cmd": "ls", "api_key": "<redacted:key:api_key>"}
    preview = tool_short["content"]["tool_result"]
    assert len(preview) < 700 and preview.endswith("chars]")
    snap_full = next(e for e in files["checkpoint"] if e["type"] == fmt.SNAPSHOT)
    snap_short = next(e for e in files["trace"] if e["type"] == fmt.SNAPSHOT)
    assert snap_full["state"] == {"password": "plain-p-2", "step": 1}
    assert snap_short["state"] == {"password": "<redacted:key:password>", "step": 1}
    for plain in (SECRET, "plain-k-1", "plain-p-2"):
        assert plain.encode() not in trace_file.read_bytes()
        assert plain.encode() in checkpoint_file.read_bytes()

    for path in zips:
        with zipfile.ZipFile(path) as zf:
            meta = orjson.loads(zf.read(fmt.ZIP_METADATA))
            events = zf.read(fmt.ZIP_EVENTS)
        checkpoint = path.name.endswith(".checkpoint.zip")
        assert meta["tier"] == ("checkpoint" if checkpoint else "trace") and meta["private"] is checkpoint
        assert (SECRET.encode() in events) is checkpoint
        assert _mode(path) == (0o600 if checkpoint else _mode(path) & ~0o022)
    assert _mode(checkpoint_file) == 0o600 and _mode(session_dir) == 0o700


def test_content_capture_keeps_message_text_in_the_trace_tier_redacted(provider, session_dir):
    settings = Settings(directory=session_dir, capture_content="SPAN_AND_EVENT")
    s = oat.session(settings=settings).start()
    oat.record_message("user", f"use key {SECRET} please")
    (trace_file,) = s.files
    s.stop()
    message = next(e for e in _entries(trace_file) if e["type"] == fmt.MESSAGE)
    assert message["content"] == "use key <redacted:openai_key> please"


def test_explicit_paths_per_tier(provider, tmp_path):
    trace_path = tmp_path / "share" / "run.jsonl"
    checkpoint_path = tmp_path / "private" / "run.jsonl"
    s = oat.session(trace_path=trace_path, checkpoint_path=checkpoint_path).start()
    oat.record_message("user", f"key {SECRET}")
    assert s.files == [trace_path, checkpoint_path]
    zips = s.stop()
    assert SECRET.encode() not in trace_path.read_bytes() and SECRET.encode() in checkpoint_path.read_bytes()
    assert _mode(checkpoint_path) == 0o600 and _mode(checkpoint_path.parent) == 0o700
    assert {Path(z).parent for z in zips} == {trace_path.parent, checkpoint_path.parent}
    only = oat.session(checkpoint_path=tmp_path / "only.jsonl").start()
    assert [p.name for p in only.files] == ["only.jsonl"]  # a checkpoint path alone: that tier only
    only.stop()


def test_one_file_for_both_tiers_is_rejected(provider, tmp_path):
    path = tmp_path / "run.jsonl"
    with pytest.raises(SettingsError, match="same file"):
        oat.session(trace_path=path, checkpoint_path=tmp_path / "x" / ".." / "run.jsonl")
    path.write_text("")
    (tmp_path / "link.jsonl").symlink_to(path)
    with pytest.raises(SettingsError, match="same file"):
        oat.session(trace_path=tmp_path / "link.jsonl", checkpoint_path=path)
    env = {"AGENT_TRACE_TRACE_PATH": str(path), "AGENT_TRACE_CHECKPOINT_PATH": str(path)}
    with pytest.raises(SettingsError, match="AGENT_TRACE_TRACE_PATH and AGENT_TRACE_CHECKPOINT_PATH"):
        Settings.from_env(env)
    with pytest.raises(SettingsError, match="does not record the checkpoint tier"):
        Settings.from_env({"AGENT_TRACE_CHECKPOINT_PATH": str(path), "AGENT_TRACE_TIER": "trace"})
    assert Settings.from_env({"AGENT_TRACE_CHECKPOINT_PATH": str(path)}).tiers == ("checkpoint",)
    assert Settings.from_env({"AGENT_TRACE_REDACT_PATTERNS": r'["a{2,3}", "b,c"]'}).redact_patterns == (
        "a{2,3}",
        "b,c",
    )


def test_an_existing_open_directory_is_left_alone_but_reported(provider, tmp_path, caplog):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    with caplog.at_level(logging.WARNING, logger="otel_agent_trace"):
        s = oat.session(directory=shared, tier="both").start()
        s.stop()
    assert _mode(shared) == 0o755
    assert all(_mode(p) == 0o600 for p in shared.glob("*.checkpoint.*"))
    assert "open to others" in caplog.text and str(shared) in caplog.text


def test_one_file_for_both_tiers_under_opentelemetry_instrument(tmp_path):
    """Zero-code: the agent still runs, nothing is recorded, and stderr says why."""
    from tests.e2e.helpers import run_instrumented

    script = tmp_path / "agent.py"
    script.write_text("import otel_agent_trace as oat\nwith oat.agent('a'):\n    pass\nprint('agent ran')\n")
    env = {"AGENT_TRACE_TRACE_PATH": "run.jsonl", "AGENT_TRACE_CHECKPOINT_PATH": "./x/../run.jsonl"}
    done = run_instrumented(script, tmp_path, env)
    assert done.returncode == 0 and done.stdout.strip() == "agent ran"
    assert "AGENT_TRACE_TRACE_PATH and AGENT_TRACE_CHECKPOINT_PATH name the same file" in done.stderr
    assert not list(tmp_path.glob("**/*.jsonl"))
