"""Under ``opentelemetry-instrument`` the three system instrumentors load from their entry points
and record a tool's file, process and HTTP activity under its span, with no code of ours."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.e2e.helpers import only_session, run_instrumented

from .conftest import events_under, spans_under, tool_start

AGENT = Path(__file__).resolve().parent / "agents" / "busy_tool.py"


def test_zero_code_run_records_the_system_layer_under_the_tool(tmp_path: Path):
    sessions = tmp_path / "sessions"
    done = run_instrumented(AGENT, tmp_path, {"AGENT_TRACE_DIR": str(sessions)}, str(tmp_path))
    assert done.returncode == 0, done.stderr
    all_entries = [orjson.loads(line) for line in only_session(sessions).read_bytes().splitlines()]
    start = tool_start(all_entries, "busy_tool")
    opens = [e["attributes"]["file.path"] for e in events_under(all_entries, start, "file.open")]
    assert opens == [str(tmp_path / "notes.txt")]
    children = {e["name"]: e["attributes"] for e in spans_under(all_entries, start)}
    assert children["process true"]["process.exit.code"] == 0
    # the command as the tool wrote it (not as trace-context propagation rewrites it for the shell)
    assert children["process sh"]["process.command_args"] == ["/bin/sh", "-c", "exit 0"]
    assert children["GET"]["http.response.status_code"] == 204
    assert children["GET"]["url.full"].endswith("/ping")
