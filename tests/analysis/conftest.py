"""Sessions recorded for the analysis tests by the real instrumentation: ``coding_agent.py`` run
under ``opentelemetry-instrument`` in a subprocess, its OpenAI client talking to the local replay
server, whose script (tool calls, errors, answers) makes each scenario."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import clean_env
from tests.fakes.llm_server import FakeLLMServer

AGENT = Path(__file__).parent / "agents" / "coding_agent.py"
INSTRUMENT = str(Path(sys.executable).parent / "opentelemetry-instrument")
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"

CALC_OK = "def add(a, b):\n    return a + b\n"
CALC_BUG = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
TASK = "Make add() in calc.py work and prove it"
ANSWER = "Fixed: add works and the test passes."


def tool_reply(*calls: tuple[str, dict[str, Any]], finish: str = "tool_calls") -> dict[str, Any]:
    """A chat completion asking for these tool calls."""
    tool_reply.n += 1  # type: ignore[attr-defined]
    n = tool_reply.n  # type: ignore[attr-defined]
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }
    return _completion(f"chatcmpl-{n}", message, finish, 100, 20)


tool_reply.n = 0  # type: ignore[attr-defined]


def final(text: str, finish: str = "stop") -> dict[str, Any]:
    return _completion("chatcmpl-final", {"role": "assistant", "content": text}, finish, 150, 10)


def _completion(
    rid: str, message: dict[str, Any], finish: str, tokens_in: int, tokens_out: int
) -> dict[str, Any]:
    return {
        "status": 200,
        "json": {
            "id": rid,
            "object": "chat.completion",
            "created": 1764400000,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        },
    }


SERVER_ERROR = {
    "status": 500,
    "json": {"error": {"message": "The server had an error", "type": "server_error"}},
}

SCENARIOS: dict[str, tuple[list[dict[str, Any]], dict[str, str]]] = {
    # a model error retried, a failed read, two writes, a passing test run, the answer
    "fixed": (
        [
            SERVER_ERROR,
            tool_reply(("read_file", {"path": "missing.py"})),
            tool_reply(
                ("write_file", {"path": "calc.py", "text": CALC_OK}),
                ("write_file", {"path": "test_calc.py", "text": TEST_CALC}),
            ),
            tool_reply(("run_shell", {"command": PYTEST})),
            final(ANSWER),
        ],
        {"AGENT_TRACE_TIER": "both"},
    ),
    # the same run without the failed read and the model error
    "fixed_direct": (
        [
            tool_reply(
                ("write_file", {"path": "calc.py", "text": CALC_OK}),
                ("write_file", {"path": "test_calc.py", "text": TEST_CALC}),
            ),
            tool_reply(("run_shell", {"command": PYTEST})),
            final(ANSWER),
        ],
        {},
    ),
    # the same failing read four times, then an answer without any verification
    "loop": (
        [
            *(tool_reply(("read_file", {"path": "missing.py"})) for _ in range(4)),
            final("I could not find it."),
        ],
        {},
    ),
    # a bug written, the tests fail, the agent answers anyway
    "failing_tests": (
        [
            tool_reply(
                ("write_file", {"path": "calc.py", "text": CALC_BUG}),
                ("write_file", {"path": "test_calc.py", "text": TEST_CALC}),
            ),
            tool_reply(("run_shell", {"command": PYTEST})),
            final("Done."),
        ],
        {},
    ),
    # killed as it was about to run its second tool call
    "crash": (
        [
            tool_reply(("write_file", {"path": "calc.py", "text": CALC_OK})),
            tool_reply(("read_file", {"path": "calc.py"})),
        ],
        {"AGENT_CRASH_AFTER": "2"},
    ),
    # the agent runs out of turns and raises
    "max_turns": (
        [tool_reply(("read_file", {"path": "a.py"})), tool_reply(("read_file", {"path": "b.py"}))],
        {"AGENT_MAX_TURNS": "2"},
    ),
}


def record(server: FakeLLMServer, name: str, root: Path) -> Path:
    """Run one scenario in ``root/<name>``; the trace-tier session file it left."""
    script, env = SCENARIOS[name]
    work = root / name
    work.mkdir()
    server.reset()
    server.queue(*script)
    extra = {"FAKE_OPENAI_URL": server.openai_url, "AGENT_TRACE_DIR": str(work / "sessions"), **env}
    done = subprocess.run(
        [INSTRUMENT, sys.executable, str(AGENT), TASK],
        cwd=work,
        env=clean_env(extra),
        capture_output=True,
        text=True,
        timeout=180,
    )
    expected = {"crash": 3, "max_turns": 1}.get(name, 0)
    assert done.returncode == expected, (name, done.returncode, done.stderr[-3000:])
    (path,) = [
        p
        for p in (work / "sessions").glob("session-*.jsonl")
        if not re.search(r"\.(checkpoint|p\d+)\.", p.name)
    ]
    return path


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Every scenario recorded once: name -> its trace-tier ``.jsonl``."""
    root = tmp_path_factory.mktemp("recorded")
    with FakeLLMServer() as server:
        yield {name: record(server, name, root) for name in SCENARIOS}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``otel-agent-trace ARGS`` in a subprocess (output not a terminal)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    return subprocess.run(
        [sys.executable, "-m", "otel_agent_trace.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )
