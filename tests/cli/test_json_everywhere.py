"""``--json`` on every verb, on a real recording: one JSON document on standard output (``view``
alone streams JSON Lines, one entry a line, so a huge file never has to fit in memory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, _record
from .helpers import CLI

# The verbs that report something; ``mcp`` is a server (JSON-RPC on stdio) and says so instead.
REPORTING = {
    "list",
    "view",
    "prune",
    "replay",
    "fork",
    "resume",
    "export",
    "export-dir",
    "analyze",
    "analyze-dir",
    "diff",
    "report",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory holding ``examples/`` and the demo agent's recording in both tiers."""
    work = tmp_path_factory.mktemp("json")
    shutil.copytree(REPO / "examples", work / "examples")
    _record(work / "examples" / "demo_agent.py", work, AGENT_TRACE_TIER="both")
    (work / "answering.py").write_text(
        "def make_agent():\n    return lambda messages: f'{len(messages)} messages read'\n"
    )
    return work


def _cli(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env["AGENT_TRACE_DIR"] = str(work / "replayed")
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=work, env=env)


def _document(done: subprocess.CompletedProcess[str]) -> object:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_every_verb_answers_in_json(run: Path) -> None:
    sessions = run / "agent-sessions"
    (trace,) = (p for p in sessions.glob("session-*.jsonl") if ".checkpoint." not in p.name)
    (checkpoint,) = sessions.glob("session-*.checkpoint.jsonl")
    first_span = next(
        json.loads(line)["id"] for line in checkpoint.read_text().splitlines() if '"span.start"' in line
    )
    answers = {
        "list": _document(_cli(run, "list", "--json", str(sessions))),
        "prune": _document(_cli(run, "prune", "--json", "--dry-run", "--older-than", "1s", str(sessions))),
        "replay": _document(_cli(run, "replay", "--json", str(trace))),
        "replay --execute-tools": _document(
            _cli(
                run,
                "replay",
                "--json",
                str(checkpoint),
                "--execute-tools",
                "--workspace",
                str(run / "ws"),
                "--tools-from",
                "examples/demo_agent.py",
            )  # fmt: skip
        ),
        "replay --model-replay": _document(
            _cli(
                run,
                "replay",
                "--json",
                str(checkpoint),
                "--model-replay",
                "--",
                sys.executable,
                "examples/demo_agent.py",
            )  # fmt: skip
        ),
        "fork": _document(
            _cli(run, "fork", "--json", str(checkpoint), "--at", first_span, "--output", str(run / "f.jsonl"))
        ),
        "resume": _document(
            _cli(run, "resume", "--json", str(checkpoint), "--agent", "answering:make_agent", "go on")
        ),
        "export": _document(
            _cli(run, "export", "--json", str(trace), "--format", "otlp-json", str(run / "t.otlp.jsonl"))
        ),
        "export-dir": _document(
            _cli(run, "export-dir", "--json", str(sessions), "--format", "otlp-json", str(run / "otlp"))
        ),
        "analyze": _document(_cli(run, "analyze", "--json", str(trace))),
        "analyze-dir": _document(_cli(run, "analyze-dir", "--json", str(sessions))),
        "diff": _document(_cli(run, "diff", "--json", str(trace), str(checkpoint))),
        "report": _document(_cli(run, "report", "--json", str(trace))),
        "view --html": _document(_cli(run, "view", "--json", str(trace), "--html", str(run / "v.html"))),
    }
    assert {name.split()[0] for name in answers} | {"view"} == REPORTING
    assert all(isinstance(answer, dict) for answer in answers.values()), answers
    assert [s["session_id"] for s in answers["list"]["sessions"]] == [trace.name.removesuffix(".jsonl")]
    assert answers["replay"]["ok"] is True and answers["replay"]["entries"] > 0
    assert len(answers["replay --execute-tools"]["calls"]) == 3
    assert answers["replay --model-replay"]["answered"] == 4
    assert answers["fork"]["fork_point"] == first_span
    assert answers["resume"]["answer"].endswith("messages read")
    assert answers["export"]["spans"] > 0 and answers["export-dir"]["sessions"][0]["spans"] > 0
    assert "# " in answers["report"]["markdown"]
    # view streams: JSON Lines, one entry a line
    view = _cli(run, "view", "--json", str(trace))
    assert view.returncode == 0, view.stderr
    lines = view.stdout.splitlines()
    assert len(lines) == len(trace.read_text().splitlines())
    assert all(isinstance(json.loads(line), dict) for line in lines)


def test_mcp_says_it_is_a_server() -> None:
    done = subprocess.run([*CLI, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    assert "JSON-RPC" in done.stdout and "no --json" in done.stdout
