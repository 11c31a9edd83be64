"""The public API writes the session tree a user expects: agent → tool → events, messages,
snapshots; parent links; ZIP; loadable."""

from __future__ import annotations

import asyncio
import os
import stat
import zipfile

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt


def _entries(path):
    return [orjson.loads(line) for line in open(path, "rb")]


@oat.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_agent_tool_tree_is_parent_linked(recording):
    with oat.agent("calc"):
        assert add(2, 3) == 5
    files = recording.files
    recording.stop()
    entries = _entries(files[0])
    by_id = {e["id"]: e for e in entries}
    root = entries[0]
    assert root["type"] == fmt.SESSION_START and root["parent_id"] == ""
    agent_start = next(e for e in entries if e["type"] == "span.start" and e["name"] == "invoke_agent calc")
    # a tool call with nothing under it is one line: its end, under the agent's start (format 1.2)
    (tool_end,) = [e for e in entries if e.get("name") == "execute_tool add"]
    assert tool_end["type"] == "span.end"
    assert agent_start["parent_id"] == root["id"]
    assert tool_end["parent_id"] == agent_start["id"]
    assert tool_end["layer"] == "tool" and agent_start["layer"] == "agent"
    assert tool_end["attributes"]["gen_ai.tool.name"] == "add"
    assert tool_end["attributes"]["agent_trace.tool.import_path"] == f"{__name__}:add"
    assert tool_end["content"]["tool_arguments"] == {"a": 2, "b": 3}
    assert tool_end["content"]["tool_result"] == 5
    assert all(e["parent_id"] in by_id for e in entries[1:])
    assert entries[-1]["type"] == fmt.SESSION_END


def test_every_span_carries_the_session_id(recording, memory_exporter):
    with oat.agent("a"), oat.tool("t"):
        pass
    spans = memory_exporter.get_finished_spans()
    assert {s.attributes["session.id"] for s in spans} == {recording.session_id}


def test_tool_error_is_recorded_and_reraised_unchanged(recording):
    class Boom(Exception):
        pass

    @oat.tool
    def explode():
        raise Boom("no")

    with pytest.raises(Boom, match="no"):
        explode()
    files = recording.files
    recording.stop()
    end = next(e for e in _entries(files[0]) if e["type"] == "span.end")
    assert end["status"]["code"] == "ERROR"
    assert end["attributes"]["error.type"].endswith("Boom")
    assert any(e["type"] == "span.event" and e["name"] == "exception" for e in _entries(files[0]))


def test_async_generators_and_generators_keep_values(recording):
    @oat.tool
    def count(n):
        yield from range(n)

    @oat.tool
    async def acount(n):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    @oat.agent
    async def run():
        return [i async for i in acount(3)]

    assert list(count(3)) == [0, 1, 2]
    assert asyncio.run(run()) == [0, 1, 2]
    files = recording.files
    recording.stop()
    names = [e["name"] for e in _entries(files[0]) if e["type"] == "span.end"]
    assert names == ["execute_tool count", "execute_tool acount", "invoke_agent run"]


def test_messages_are_written_once_and_snapshots_reference_them(recording):
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    oat.snapshot("one", messages=msgs[:1])
    oat.snapshot("two", messages=msgs, system_prompt="be nice")
    files = recording.files
    zips = recording.stop()
    entries = _entries(files[0])
    messages = [e for e in entries if e["type"] == "message"]
    assert len(messages) == 2  # the repeated first message is not written again
    assert all("content" not in m and m["content_chars"] > 0 for m in messages)  # trace tier
    snaps = [e for e in entries if e["type"] == "snapshot"]
    assert snaps[1]["message_ids"][0] == snaps[0]["message_ids"][0]
    with zipfile.ZipFile(zips[0]) as zf:
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)
        zipped = orjson.loads(zf.read(fmt.ZIP_SNAPSHOTS))
    assert [list(s) for s in zipped] == [list(fmt.ZIP_SNAPSHOT_KEYS)] * 2  # DevDuck's, messages by id
    assert zipped[1]["agent_messages_count"] == 2
    assert [s["agent_message_ids"] for s in zipped] == [s["message_ids"] for s in snaps]
    shown = oat.load_session(zips[0]).snapshots  # resolved as DevDuck shows them
    assert [list(s) for s in shown] == [list(fmt.DEVDUCK_SNAPSHOT_KEYS)] * 2
    assert [m["content_chars"] for m in shown[1]["agent_messages"]] == [2, 5]


def test_checkpoint_tier_keeps_full_text_privately(provider, session_dir):
    s = oat.session(directory=session_dir, tier="both").start()
    oat.snapshot("s", messages=[{"role": "user", "content": "secret plan"}], state={"step": 3})
    trace_file, checkpoint_file = s.files
    zips = s.stop()
    assert checkpoint_file.name.endswith(".checkpoint.jsonl")
    assert stat.S_IMODE(os.stat(checkpoint_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(session_dir).st_mode) == 0o700
    full = [e for e in _entries(checkpoint_file) if e["type"] == "message"]
    short = [e for e in _entries(trace_file) if e["type"] == "message"]
    assert full[0]["content"] == "secret plan"
    assert "content" not in short[0]
    assert b"secret plan" not in trace_file.read_bytes()
    assert len(zips) == 2
    for path in (trace_file, checkpoint_file):  # counts are of what happened, not of files written
        assert _entries(path)[-1]["counts"]["messages"] == 1
    loaded = oat.load_session(zips[1])
    assert loaded.metadata["tier"] == "checkpoint" and loaded.metadata["private"] is True
    with zipfile.ZipFile(zips[1]) as zf:
        resume = orjson.loads(zf.read(fmt.ZIP_RESUME))
    assert resume["resumable"] is True and resume["state"] == {"step": 3}


def test_load_session_devduck_api(recording):
    with oat.agent("a"):
        with oat.tool("t", arguments={"x": 1}) as call:
            call.set_result("ok")
        oat.snapshot("snap")
    zips = recording.stop()
    loaded = oat.load_session(zips[0])
    assert repr(loaded).startswith(f"LoadedSession(id={recording.session_id}, events=")
    assert [e.event_type for e in loaded.get_events_by_layer("tool")] == ["span.end"]  # one line a call
    assert len(loaded.get_events_by_type("snapshot")) == 1
    assert loaded.snapshots[0]["description"] == "snap"
    assert loaded.complete
    spans = {s.name: s for s in loaded.spans}
    assert spans["execute_tool t"].parent_span_id == spans["invoke_agent a"].span_id
    assert spans["execute_tool t"].content["tool_result"] == "ok"


def test_two_sessions_in_one_second_never_collide(provider, session_dir):
    ids = set()
    for _ in range(20):
        s = oat.session(directory=session_dir).start()
        ids.add(s.session_id)
        s.stop()
    assert len(ids) == 20
    assert len(list(session_dir.glob("*.zip"))) == 20


def test_record_false_means_no_local_recording_for_a_session_in_code(tmp_path):
    """``AGENT_TRACE_RECORD=false`` (forwarding only): ``oat.session(...)`` records nothing, as
    under ``opentelemetry-instrument``; the agent's code runs the same."""
    import subprocess
    import sys

    from tests.e2e.helpers import clean_env

    script = tmp_path / "agent.py"
    script.write_text(
        "import otel_agent_trace as oat\n"
        "@oat.tool\ndef add(a, b):\n    return a + b\n"
        "with oat.session('in-code', directory='sessions') as s:\n"
        "    oat.snapshot('one', messages=[{'role': 'user', 'content': 'hi'}])\n"
        "    print(add(2, 3), s.session_id, s.files, s.stop())\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=clean_env({"AGENT_TRACE_RECORD": "false"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5", "None", "[]", "[]"]
    assert not (tmp_path / "sessions").exists() and not (tmp_path / "agent-sessions").exists()
