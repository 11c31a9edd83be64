"""Identical runs of a real framework agent are ``same`` in ``diff`` (exit 0), and so are a run
and its model replay; ``analyze``'s final answer is the answer text, not the framework's whole
output (Strands' message with its metrics and random ``tracking_id``, LangGraph's final state).

The weather examples (``examples/model_replay``) recorded for real against the local fake model
server, twice each, in both tiers; the replay is the real ``replay --model-replay``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.model_replay.conftest import EXAMPLES, Recorded, record, replay

CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]
ANSWER = "It is 18°C and sunny in Paris."
AGENTS = {
    "strands": ("strands_weather.py", True),  # (its OpenAI provider always streams)
    "langgraph": ("langchain_weather.py", False),
    "agents-sdk": ("agents_sdk_weather.py", False),
}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def _trace_of(rec: Recorded) -> Path:
    return rec.session.with_name(rec.session.name.replace(".checkpoint.jsonl", ".jsonl"))


@pytest.fixture(scope="module", params=list(AGENTS))
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Recorded, Recorded]:
    script, stream = AGENTS[request.param]
    return tuple(  # type: ignore[return-value]
        record(EXAMPLES / script, tmp_path_factory.mktemp(f"{request.param}-{i}"), stream=stream, tier="both")
        for i in (1, 2)
    )


@pytest.mark.parametrize("tier", ["checkpoint", "trace"])
def test_identical_runs_are_the_same(runs: tuple[Recorded, Recorded], tier: str) -> None:
    a, b = runs
    pa, pb = (a.session, b.session) if tier == "checkpoint" else (_trace_of(a), _trace_of(b))
    done = _cli("diff", str(pa), str(pb))
    assert "final answer: same" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout
    data = json.loads(_cli("diff", "--json", str(pa), str(pb)).stdout)
    assert data["final_answer_changed"] is False


def test_the_final_answer_is_the_answer_text(runs: tuple[Recorded, Recorded]) -> None:
    done = _cli("analyze", "--json", str(runs[0].session))
    assert json.loads(done.stdout)["final_answer"]["text"] == ANSWER


def test_a_run_and_its_model_replay_are_the_same(runs: tuple[Recorded, Recorded]) -> None:
    rec = runs[0]
    before = set((rec.cwd / "agent-sessions").glob("*.checkpoint.jsonl"))
    done, report = replay(rec)
    assert done.returncode == 0 and not report["divergences"], done.stdout + done.stderr
    (new,) = set((rec.cwd / "agent-sessions").glob("*.checkpoint.jsonl")) - before
    diffed = _cli("diff", str(rec.session), str(new))
    assert "final answer: same" in diffed.stdout, diffed.stdout
    assert diffed.returncode == 0, diffed.stdout
