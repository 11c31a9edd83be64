"""Tool replay re-runs each framework's tools the way that framework calls them, and compares in
that framework's result shape: identical results are ``ok``.

Real runs under ``opentelemetry-instrument`` against the local fake model server: the weather
examples of ``examples/model_replay`` with the framework's own tool (LangChain ``@tool``, Strands
``@tool``, the Agents SDK's ``@function_tool``), and a DevDuck-like Strands agent with the tools
DevDuck uses (``strands_tools``' module tool ``file_read`` and its ``@tool`` ``shell``) and one
defined in its own script (``__main__``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.e2e.helpers import run_instrumented
from tests.fakes.llm_server import FakeLLMServer, load_recording
from tests.model_replay.conftest import EXAMPLES as WEATHER_EXAMPLES
from tests.model_replay.conftest import record as record_weather

from .conftest import cli

DEVDUCK_LIKE = '''
"""A DevDuck-like Strands agent: strands_tools' file_read (a module tool) and shell (a @tool),
and a tool of its own defined here."""
import os

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands_tools import file_read, shell


@tool
def note_length(text: str) -> int:
    """Length of a note."""
    return len(text)


def make_agent() -> Agent:
    model = OpenAIModel(
        client_args={"base_url": os.environ["OPENAI_BASE_URL"], "api_key": "sk-test", "max_retries": 0},
        model_id="gpt-4o-mini",
    )
    return Agent(
        model=model, tools=[file_read, shell, note_length], system_prompt="You are a duck.",
        callback_handler=None,
    )


if __name__ == "__main__":
    print(make_agent()("Read notes.txt, echo hello, and measure a note."))
'''


def _tool_call(name: str, arguments: dict, call_id: str) -> dict:
    """The fake server's streamed tool call, calling ``name`` with ``arguments``."""
    recording = copy.deepcopy(load_recording("openai_chat_tool_call_stream"))
    first = True
    for chunk in recording["sse"]:
        data = chunk.get("data")
        for choice in data.get("choices") or [] if isinstance(data, dict) else []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                function = call.setdefault("function", {})
                if first:
                    call["id"], function["name"] = call_id, name
                    function["arguments"] = json.dumps(arguments)
                    first = False
                else:
                    function["arguments"] = ""
    return recording


def _statuses(stdout: str) -> dict[str, str]:
    """``{tool: status}`` from a tool replay's report lines (``  STATUS  ENTRY  TOOL: detail``)."""
    out = {}
    for line in stdout.splitlines()[1:-1]:
        parts = line.split()
        if len(parts) >= 3 and parts[2].endswith(":"):
            out[parts[2].rstrip(":")] = parts[0]
    return out


@pytest.fixture(scope="module")
def devduck_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("devduck-like")
    (cwd / "devduck_like.py").write_text(DEVDUCK_LIKE)
    (cwd / "notes.txt").write_text("quack quack\n")
    with FakeLLMServer() as server:
        server.queue(
            _tool_call("file_read", {"path": "notes.txt", "mode": "view"}, "call_1"),
            _tool_call("shell", {"command": "echo hello"}, "call_2"),
            _tool_call("note_length", {"text": "quack"}, "call_3"),
            "openai_chat_final_stream",
        )
        done = run_instrumented(
            cwd / "devduck_like.py",
            cwd,
            {
                "OPENAI_BASE_URL": server.openai_url,
                "AGENT_TRACE_TIER": "checkpoint",
                "BYPASS_TOOL_CONSENT": "true",
            },
        )
    assert done.returncode == 0, done.stderr
    (session,) = (p for p in (cwd / "agent-sessions").glob("*.checkpoint.jsonl") if ".p" not in p.suffixes[0])
    return session


def test_devduck_like_tools_rerun_as_strands_calls_them(devduck_like: Path, tmp_path: Path) -> None:
    cwd = devduck_like.parent.parent
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("quack quack\n")  # the workspace the user prepared
    done = cli(
        "replay", str(devduck_like), "--execute-tools", "--workspace", str(ws),
        "--tools-from", str(cwd / "devduck_like.py"), "--allow-shell",
        cwd=tmp_path, env={"BYPASS_TOOL_CONSENT": "true"},
    )  # fmt: skip
    assert _statuses(done.stdout) == {"file_read": "ok", "shell": "ok", "note_length": "ok"}, done.stdout
    assert done.returncode == 0


def test_devduck_like_shell_is_blocked_by_what_it_is(devduck_like: Path, tmp_path: Path) -> None:
    """``strands_tools.shell`` runs commands: blocked without ``--allow-shell`` even in a recording
    that shows no process under it."""
    stripped = tmp_path / "stripped.checkpoint.jsonl"
    lines = [raw for raw in devduck_like.read_text().splitlines() if json.loads(raw).get("layer") != "sys"]
    stripped.write_text("\n".join(lines) + "\n")
    done = cli(
        "replay", str(stripped), "--execute-tools", "--workspace", str(tmp_path / "ws"),
        "--tools-from", str(devduck_like.parent.parent / "devduck_like.py"),
        cwd=tmp_path, env={"BYPASS_TOOL_CONSENT": "true"},
    )  # fmt: skip
    line = next(line for line in done.stdout.splitlines() if " shell: " in line)
    assert line.split()[0] == "blocked" and "runs commands" in line and "--allow-shell" in line, line


@pytest.mark.parametrize("script", ["strands_weather.py", "langchain_weather.py", "agents_sdk_weather.py"])
def test_a_frameworks_own_tool_reruns_and_compares_ok(script: str, tmp_path: Path) -> None:
    stream = script.startswith("strands")  # (Strands' OpenAI provider always streams)
    recorded = record_weather(WEATHER_EXAMPLES / script, tmp_path / "rec", "--framework-tool", stream=stream)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "weather.json").write_text((recorded.cwd / "weather.json").read_text())
    done = cli(
        "replay", str(recorded.session), "--execute-tools", "--workspace", str(ws),
        "--tools-from", str(recorded.script),
        cwd=tmp_path, env={"WEATHER_FILE": "weather.json", "OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    assert _statuses(done.stdout) == {"get_weather": "ok"}, done.stdout + done.stderr
    assert done.returncode == 0
