"""The session_recorder tool: DevDuck's actions, as a plain function, a Strands tool, a LangChain
tool and an MCP server (in memory, and ``otel-agent-trace mcp`` over stdio); names a model gives
never write outside the sessions directory."""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.recording import stop_active
from otel_agent_trace.settings import Settings, set_settings
from otel_agent_trace.tools import SESSION_RECORDER_SCHEMA, session_recorder
from tests.context.helpers import by_name, spans_of

from .mcp_versions import MCP2, connected, structured


@pytest.fixture
def sessions(provider, tmp_path) -> Iterator[Path]:
    directory = tmp_path / "sessions"
    set_settings(Settings(directory=directory))
    yield directory
    stop_active()
    set_settings(None)


def test_start_snapshot_status_stop_list(sessions):
    assert session_recorder("status") == {
        "status": "success",
        "message": "Not recording",
        "recording": False,
        "directory": str(sessions.absolute()),
    }
    started = session_recorder("start", name="fix-bug")
    assert started["status"] == "success" and started["message"].startswith("🎬 Recording started: session-")
    session_id = started["session_id"]
    assert session_recorder("start")["status"] == "error"  # one at a time, never silently replaced
    with oat.agent("a"):
        snap = session_recorder("snapshot", description="after API integration")
    assert snap == {
        "status": "success",
        "message": "🎬 Snapshot #1 created: after API integration",
        "snapshot_id": 1,
    }
    status = session_recorder("status")
    assert status["recording"] and status["session_id"] == session_id
    stopped = session_recorder("stop")
    zip_path = sessions.absolute() / f"{session_id}.zip"
    assert stopped["zip_paths"] == [str(zip_path)] and stopped["snapshots"] == 1
    assert stopped["message"] == f"🎬 Recording stopped and exported: {zip_path}"
    loaded = oat.load_session(zip_path)
    assert [s["description"] for s in loaded.snapshots] == ["after API integration"]
    snapshot_entry = next(e for e in loaded.events if e.type == fmt.SNAPSHOT)
    assert snapshot_entry.parent_id == by_name(loaded.spans, "invoke_agent a").entry_id
    assert session_recorder("stop") == {"status": "error", "message": "Not recording"}
    assert session_recorder("snapshot")["status"] == "error"
    listed = session_recorder("list")
    assert [s["session_id"] for s in listed["sessions"]] == [session_id]
    assert listed["sessions"][0]["zip"] == str(zip_path) and listed["sessions"][0]["name"] == "fix-bug"
    assert session_recorder("rewind")["status"] == "error"


def test_schema_describes_every_action():
    params = SESSION_RECORDER_SCHEMA["parameters"]
    assert params["properties"]["action"]["enum"] == ["start", "snapshot", "stop", "status", "list"]
    assert params["required"] == ["action"]


@pytest.mark.parametrize(
    "filename",
    ["../escape", "/tmp/escape", "sub/escape", "..", ".hidden", "a\x00b", "x" * 200, "..zip", "a\\b"],
)
def test_a_model_supplied_name_never_leaves_the_sessions_directory(sessions, tmp_path, filename):
    session_recorder("start")
    refused = session_recorder("stop", filename=filename)
    assert refused["status"] == "error" and refused["message"].startswith("Refused")
    assert session_recorder("status")["recording"]  # refused before anything was stopped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions"]
    assert all(p.suffix in (".jsonl",) for p in sessions.iterdir())


def test_a_symlink_planted_at_the_name_is_not_followed(sessions, tmp_path):
    session_recorder("start")
    outside = tmp_path / "outside"
    outside.mkdir()
    (sessions / "evil.zip").symlink_to(outside / "evil.zip")
    refused = session_recorder("stop", filename="evil")
    assert refused["status"] == "error" and refused["message"].startswith("Refused")
    assert list(outside.iterdir()) == []
    saved = session_recorder("stop", filename="my-run")
    assert saved["saved_as"] == str((sessions / "my-run.zip").resolve())
    with zipfile.ZipFile(saved["saved_as"]) as zf:
        assert zf.namelist() == list(fmt.ZIP_MEMBERS)


def test_strands_agent_snapshots_through_the_tool(sessions):
    import strands

    from otel_agent_trace.instrumentation.strands_tools import StrandsToolsInstrumentor
    from otel_agent_trace.tools.strands_tool import session_recorder as recorder_tool

    assert StrandsToolsInstrumentor().is_instrumented_by_opentelemetry
    started = session_recorder("start")
    use = {
        "toolUseId": "tooluse_snap",
        "name": "session_recorder",
        "input": {"action": "snapshot", "description": "d"},
    }
    from .scripted_strands import ScriptedModel  # here: the MCP tests run without Strands too

    model = ScriptedModel([[{"toolUse": use}], [{"text": "done"}]])
    strands.Agent(model=model, tools=[recorder_tool], callback_handler=None)("take a snapshot")
    files = [Path(p) for p in session_recorder("status")["files"]]
    session_recorder("stop")
    spans = spans_of(files[0])
    tool_span = by_name(spans, "execute_tool session_recorder")
    assert tool_span.attributes["gen_ai.tool.call.id"] == "tooluse_snap"
    assert tool_span.content["tool_result"][0] == {"text": "🎬 Snapshot #1 created: d"}
    loaded = oat.load_session(files[0])
    snap = next(e for e in loaded.events if e.type == fmt.SNAPSHOT)
    assert snap.parent_id == tool_span.entry_id  # the snapshot hangs under the call that made it
    assert loaded.session_id == started["session_id"]


def test_langchain_tool(sessions):
    from otel_agent_trace.tools.langchain_tool import session_recorder as recorder_tool

    session_recorder("start")
    out = recorder_tool.invoke(
        {"name": "session_recorder", "args": {"action": "status"}, "id": "call_s", "type": "tool_call"}
    )
    assert out.tool_call_id == "call_s" and "Recording session-" in out.content


async def test_mcp_server_in_memory(sessions):
    from otel_agent_trace.tools.mcp_server import build_server

    async with connected(build_server()) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["session_recorder"]
        assert tools[0].model_dump(by_alias=True)["inputSchema"]["required"] == ["action"]
        started = await client.call_tool("session_recorder", {"action": "start"})
        status = await client.call_tool("session_recorder", {"action": "status"})
        refused = await client.call_tool("session_recorder", {"action": "stop", "filename": "../x"})
        stopped = await client.call_tool("session_recorder", {"action": "stop"})
    assert structured(started)["status"] == "success"
    assert structured(status)["session_id"] == structured(started)["session_id"]
    assert structured(refused)["status"] == "error"
    assert Path(structured(stopped)["zip_paths"][0]).exists()


async def test_cli_mcp_stdio_server(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    sessions = tmp_path / "stdio-sessions"
    sessions.mkdir()
    (sessions / "session-20260101-000000-aaaaaaaa.jsonl").write_bytes(
        b'{"id":"aaaaaaaa-0000","parent_id":"","type":"session.start","layer":"agent","ts":1,'
        b'"session_id":"session-20260101-000000-aaaaaaaa","tier":"trace","metadata":{"name":"old"}}\n'
    )
    cli = str(Path(sys.executable).parent / "otel-agent-trace")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_", "TRACE"))}
    params = StdioServerParameters(command=cli, args=["mcp", "--directory", str(sessions)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        init = await client.initialize()
        listed = await client.call_tool("session_recorder", {"action": "list"})
    import otel_agent_trace

    info = init.server_info if MCP2 else init.serverInfo
    assert info.name == "otel-agent-trace"
    assert info.version == otel_agent_trace.__version__  # ours, not the MCP SDK's
    sessions_listed = structured(listed)["sessions"]
    assert [(s["session_id"], s["name"]) for s in sessions_listed] == [
        ("session-20260101-000000-aaaaaaaa", "old")
    ]


def test_cli_mcp_without_the_mcp_sdk_says_how_to_install_it():
    """``otel-agent-trace mcp`` where the MCP SDK is not installed: one line naming the extra,
    exit 2, no traceback."""
    import subprocess

    code = (
        "import sys; sys.modules['mcp'] = None; "  # as if not installed: import mcp fails
        "from otel_agent_trace.cli.main import main; sys.exit(main(['mcp']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pip install 'otel-agent-trace[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr
