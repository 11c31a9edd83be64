"""The README's demo (``examples/demo_agent.py`` and its scripted model on a free loopback port)
recorded and model-replayed with the README's commands: the model server of the replay binds
another port, and the replay answers it from the recording all the same."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import INSTRUMENT, clean_env

from .conftest import CLI, REPO, entries

ANSWER = "The examples folder holds a demo agent and its demo model; Python runs fine here."
TASK = "What is in the examples folder, and does Python run?"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, Path]:
    """``(working directory, checkpoint session)`` of one recorded run of the demo."""
    work = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "examples", work / "examples")
    done = subprocess.run(
        [INSTRUMENT, sys.executable, "examples/demo_agent.py"],
        cwd=work,
        env=clean_env({"AGENT_TRACE_TIER": "checkpoint"}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ANSWER
    (session,) = (work / "agent-sessions").glob("*.checkpoint.jsonl")
    return work, session


def _replay(work: Path, session: Path, *task: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = work / f"report-{len(list(work.glob('report-*')))}.json"
    done = subprocess.run(
        [*CLI, "replay", str(session.relative_to(work)), "--model-replay", "--report", str(report),
         "--", sys.executable, "examples/demo_agent.py", *task],
        cwd=work,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    return done, json.loads(report.read_text())


def test_the_demo_replays_with_the_readme_commands(demo):
    work, session = demo
    done, report = _replay(work, session)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == ANSWER
    assert report["refused"] == [] and report["divergences"] == []
    assert report["answered"] == report["recorded_exchanges"] == 4
    # its model server bound another free port: the same loopback host, the port not compared
    recorded_url = next(
        x["request"]["url"] for e in entries(session) if e["type"] == "span.end"
        for x in (e.get("content") or {}).get("http_exchanges", [])
    )  # fmt: skip
    assert all(c["request"].split()[1] != recorded_url for c in report["calls"])
    assert all(c.get("origin") == "loopback: port not compared" for c in report["calls"])
    assert "no divergence" in done.stdout


def test_the_demo_s_tools_are_answered_from_the_recording(demo):
    """The recording chose the tools' arguments (a command among them): none runs."""
    work, session = demo
    done, _report = _replay(work, session)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("the replayed run: "))
    new = entries(work / line.removeprefix("the replayed run: "))
    tools = [e for e in new if e["type"] == "span.end" and e["name"].startswith("execute_tool ")]
    assert sorted(e["name"] for e in tools) == [
        "execute_tool list_files", "execute_tool read_file", "execute_tool run_command"
    ]  # fmt: skip

    def commands(session_entries: list[dict]) -> list[dict]:  # `python --version` started
        return [
            e for e in session_entries
            if e.get("layer") == "sys" and "--version" in json.dumps(e.get("attributes"))
        ]  # fmt: skip

    assert commands(entries(session)) and not commands(new)


def test_a_divergence_is_the_report_alone_without_a_traceback(demo):
    work, session = demo
    task = f"{TASK}\nAnswer in French, please."
    done, report = _replay(work, session, task)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    assert "model replay: call 1 (POST http://127.0.0.1:" in done.stderr
    assert "otel-agent-trace: it stopped the program there (ModelReplayDivergence)" in done.stderr
    assert report["stopped"] is True and report["divergences"][0]["call"] == 1
    # the summary shows the text's diff as lines, not one line with literal \n
    out = done.stdout.splitlines()
    start = out.index("first divergence at call 1 (recorded entry "
                      f"{report['divergences'][0]['entry_id']}):")  # fmt: skip
    assert out[start + 1] == "  body.messages[1].content:"
    assert f"       {TASK}" in out and "      +Answer in French, please." in out
    assert "\\n" not in done.stdout
