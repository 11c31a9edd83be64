# ruff: noqa: E501  (DM entries are laid out one a line, as DM writes them)
"""DM-Code-Agent checkpoint files (``dm-agent --checkpoint FILE.jsonl``) resumed, forked and listed
as DM's own tools do (``/work/shared/REFERENCE.md`` §9): a ``checkpoint`` entry's
``state.conversation_history`` is a snapshot; resume takes the last checkpoint, or the latest at or
before ``--at`` an entry (``dm-agent --resume FILE --resume-at ID``); a fork is DM's own lines and a
DM ``fork`` entry, resumable when a checkpoint is at or before the point. Files are made as DM's
writer makes them (:mod:`tests.analysis.test_dm_verdicts`), with every event type of DM's list,
in both tiers, pre-2.0, forked, and with several runs in one file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.fork import fork_session
from otel_agent_trace.offline.resume import ResumeError, resume_from_snapshot
from tests.analysis.test_dm_verdicts import RECOVERED, RUN, RUN2, _llm, _step, _tool, dm_lines, write
from tests.cli.helpers import cli

SYSTEM = {"role": "system", "content": "You are DM-Code-Agent."}
TASK = "Fix retry.py and run tests"


def checkpoint_tier(
    steps: list[tuple[str, dict[str, Any]]], task: str = TASK, history: list[dict[str, Any]] | None = None
):  # type: ignore[no-untyped-def]
    """``steps`` as the ``--checkpoint`` writer has them: messages with their whole text, and after
    each ``step`` a ``checkpoint`` (the run's state, its conversation so far) then
    ``checkpoint_saved``. Returns the steps and each checkpoint's conversation."""
    history = list(history or [SYSTEM])
    out: list[tuple[str, dict[str, Any]]] = []
    conversations: list[list[dict[str, Any]]] = []
    for event, payload in steps:
        if event == "message":
            content = payload.get("content") or f"<{payload.get('kind')} {payload['step_number']}>"
            payload = {k: v for k, v in payload.items() if k != "content_sha256"} | {"content": content}
            history.append({"role": payload["role"], "content": content})
        out.append((event, payload))
        if event == "step":
            state = {"task": task, "step_count": payload["step_number"], "conversation_history": list(history),
                     "steps": [], "metadata": {}, "plan": [], "compressor_state": {},
                     "agent_config": {"provider": "deepseek", "model": "deepseek-chat"}, "cwd": "/w",
                     "schema_version": 1}  # fmt: skip
            out.append(("checkpoint", {"step_number": payload["step_number"], "state": state}))
            out.append(("checkpoint_saved", {"step_number": payload["step_number"]}))
            conversations.append(list(history))
    return out, conversations


STEPS, CONVERSATIONS = checkpoint_tier([s for s in RECOVERED if s[0] != "checkpoint_saved"])


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write(tmp_path / "run.jsonl", dm_lines(STEPS))


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def _checkpoint_ids(path: Path) -> list[str]:
    return [e["id"] for e in map(json.loads, path.read_text().splitlines()) if e["event"] == "checkpoint"]


def test_a_checkpoint_file_is_the_checkpoint_tier_with_a_snapshot_per_checkpoint(run, tmp_path):
    session = load_session(run)
    assert session.tier == "checkpoint" and len(CONVERSATIONS) == 7
    assert [s["agent_messages"] for s in session.snapshots] == CONVERSATIONS  # DM's whole history
    assert [s["snapshot_id"] for s in session.snapshots] == list(range(1, 8))
    assert session.snapshots[0]["last_query"] == TASK and session.snapshots[0]["cwd"] == "/w"
    assert session.duration == 42.5  # the last run_end's duration_seconds
    trace = load_session(write(tmp_path / "trace.jsonl", dm_lines(RECOVERED)))
    assert trace.tier == "trace" and trace.snapshots == []  # --trace: nothing to resume


def test_resume_takes_the_last_checkpoint_or_the_latest_at_or_before_an_entry(run):
    session = load_session(run)
    checkpoints = _checkpoint_ids(run)
    messages: list[dict[str, Any]] = []
    restored = resume_from_snapshot(session, agent=messages)  # dm-agent --resume run.jsonl
    assert restored.entry_id == checkpoints[-1] and restored.snapshot_id == 7
    assert messages == CONVERSATIONS[-1] and restored.target == "openai_messages"
    ids = _ids(run)
    third = ids.index(checkpoints[2])
    for at in (ids[third], ids[third + 1], ids[third + 2]):  # the checkpoint, or an entry after it
        restored = resume_from_snapshot(session, at=at, agent=messages)  # --resume-at
        assert restored.entry_id == checkpoints[2] and messages == CONVERSATIONS[2]
    with pytest.raises(ResumeError, match="no snapshot at or before"):
        resume_from_snapshot(session, at=ids[0])  # before any checkpoint


def test_a_fork_is_dms_own_lines_and_fork_entry_and_resumes(run, tmp_path):
    session = load_session(run)
    checkpoints = _checkpoint_ids(run)
    ids = _ids(run)
    point = ids[ids.index(checkpoints[3]) + 2]  # two entries after the fourth checkpoint
    result = fork_session(session, point)
    assert result.path == tmp_path / f"run.fork-{point}.jsonl"  # DM's name for it
    assert result.resumable and result.snapshot_id == 4 and result.tier == "checkpoint"
    assert result.reason.startswith(f"the checkpoint {checkpoints[3]} (checkpoint at step 4), ")
    assert os.stat(result.path).st_mode & 0o777 == 0o600  # whole conversations: private
    lines = [json.loads(line) for line in result.path.read_text().splitlines()]
    source = [json.loads(line) for line in run.read_text().splitlines()]
    assert lines[:-1] == source[: ids.index(point) + 1]  # copied verbatim, ids and all
    fork = lines[-1]
    assert set(fork) == {"id", "parent_id", "timestamp", "run_id", "event", "payload"}
    assert (fork["event"], fork["parent_id"]) == ("fork", point)
    assert fork["payload"] == {
        "source": str(run),
        "forked_from_entry_id": point,
        "entry_count": len(lines) - 1,
    }
    branch = load_session(result.path)
    assert branch.format.NAME == "dm-code-agent" and branch.tier == "checkpoint"
    restored = resume_from_snapshot(branch)  # dm-agent --resume run.fork-….jsonl
    assert restored.entry_id == checkpoints[3] and restored.messages == CONVERSATIONS[3]
    assert branch.duration is None  # no run_end in the branch; the fork entry's time is no duration
    with pytest.raises(FileExistsError):
        fork_session(session, point)  # never overwritten


def test_a_fork_of_a_trace_file_or_before_any_checkpoint_is_not_resumable(run, tmp_path):
    trace = write(tmp_path / "trace.jsonl", dm_lines(RECOVERED))
    result = fork_session(load_session(trace), f"{RUN[:8]}-0020")
    assert not result.resumable and "no checkpoint entry at or before the fork point" in result.reason
    assert os.stat(result.path).st_mode & 0o777 == 0o644
    early = fork_session(load_session(run), _ids(run)[3])
    assert not early.resumable and early.snapshot_id is None


def test_a_pre_2_0_checkpoint_file_forks_with_its_legacy_ids_and_resumes(tmp_path):
    legacy = write(
        tmp_path / "old.jsonl", dm_lines(STEPS, legacy=True, timestamps=[f"t{i}" for i in range(len(STEPS))])
    )
    session = load_session(legacy)
    assert session.tier == "checkpoint" and session.events[0].id == "legacy-0000"
    ids = [e.id for e in session.events]
    point = ids[-3]
    result = fork_session(session, point)
    lines = [json.loads(line) for line in result.path.read_text().splitlines()]
    # DM's fork copies the entries as it loaded them: the legacy ids written out, each under the last
    assert [line["id"] for line in lines[:-1]] == ids[: len(lines) - 1]
    assert [line["parent_id"] for line in lines[:-1]] == ["", *ids[: len(lines) - 2]]
    assert lines[-1]["parent_id"] == point and result.resumable
    assert resume_from_snapshot(load_session(result.path)).messages == CONVERSATIONS[-1]


def test_several_runs_in_one_file_resume_at_the_latest_run_and_end_on_its_run_end(tmp_path):
    # a run that hit max steps, then `dm-agent --resume` appended a second run to the same file
    first, conversations = checkpoint_tier([RECOVERED[0], RECOVERED[1], RECOVERED[4], _llm(1),
                                            _tool(1, "read_file", "a.py", "x"), _step(1, "read_file")])  # fmt: skip
    first.append(
        (
            "run_end",
            {"status": "max_steps_exceeded", "duration_seconds": 30.0, "final_answer": "", "metadata": {}},
        )
    )
    second, more = checkpoint_tier(
        [("run_resumed", {"step_number": 1, "checkpoint_entry_id": f"{RUN[:8]}-0008"}), _llm(2),
         _tool(2, "run_tests", None, "2 passed"), _step(2, "run_tests"), _step(3, "finish")],
        history=conversations[-1],
    )  # fmt: skip
    second.append(
        ("run_end", {"status": "success", "duration_seconds": 12.0, "final_answer": "done", "metadata": {}})
    )
    one = dm_lines(first)
    path = write(
        tmp_path / "runs.jsonl", one, dm_lines(second, run_id=RUN2, first_seq=1, parent=one[-1]["id"])
    )
    session = load_session(path)
    assert session.duration == 12.0  # the last run_end's, as DM's summary takes it
    assert session.metadata["status"] == "success"
    assert len(session.snapshots) == 3
    assert resume_from_snapshot(session).messages == more[-1]
    listed = json.loads(cli("list", "--json", str(tmp_path)).stdout)["sessions"]
    assert [(s["status"], s["duration_s"], s["complete"]) for s in listed] == [("success", 12.0, True)]


def test_the_cli_forks_and_resumes_a_dm_checkpoint_file(run, tmp_path):
    (tmp_path / "dm_factory.py").write_text(
        "def messages():\n    return []\n\n"
        "def answerer():\n    return lambda messages: f'{len(messages)} messages, last: {messages[-1][\"content\"]}'\n"
    )
    checkpoints = _checkpoint_ids(run)
    done = cli("fork", str(run), "--at", checkpoints[1], "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    forked = json.loads(done.stdout)
    assert forked["resumable"] and forked["messages"] == len(CONVERSATIONS[1])
    assert forked["resume_command"].startswith(
        f"otel-agent-trace resume {forked['path']} --at {checkpoints[1]}"
    )
    done = cli("resume", forked["path"], "--agent", "dm_factory:messages", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    restored = json.loads(done.stdout)
    assert (restored["entry_id"], restored["messages"]) == (checkpoints[1], len(CONVERSATIONS[1]))
    env = {**os.environ, "AGENT_TRACE_DIR": str(tmp_path / "sessions")}
    done = cli(
        "resume",
        str(run),
        "--at",
        checkpoints[2],
        "--agent",
        "dm_factory:answerer",
        "what next?",
        "--json",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    answered = json.loads(done.stdout)
    assert answered["answer"] == f"{len(CONVERSATIONS[2]) + 1} messages, last: what next?"
    assert answered["entry_id"] == checkpoints[2] and answered["recorded"]
    trace = write(tmp_path / "trace.jsonl", dm_lines(RECOVERED))
    done = cli("resume", str(trace), "--agent", "dm_factory:messages", cwd=tmp_path)
    assert done.returncode == 2 and "a DM-Code-Agent --trace file has no checkpoint entry" in done.stderr
