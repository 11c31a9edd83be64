"""The seed's resume API — ``load_session(zip).resume_from_snapshot(n, agent=a)``,
``resume_and_continue(snapshot_id=n, new_query=..., agent=a)``, ``get_events_until_snapshot(n)`` —
works on DevDuck's own session ZIPs (its snapshots in ``snapshots.json``, messages whole) exactly as
on ours, into a real Strands agent (DevDuck is one) answering through the local fake server."""

from __future__ import annotations

import importlib.util
import json
import pickle
import zipfile
from pathlib import Path

import pytest

import otel_agent_trace as oat
from otel_agent_trace.offline.fork import fork_session
from tests.offline.samples import SECOND, T0, devduck_events, devduck_snapshots

from .conftest import EXAMPLES, cli

HELLO = "Hello! How can I help you today?"
QUESTION = "what was I working on?"
USE = {"toolUseId": "tooluse_1", "name": "shell", "input": {"command": "ls"}}
RESULT = {"toolUseId": "tooluse_1", "status": "success", "content": [{"text": "a.py b.py"}]}
DUCK_TOOL_TURN = [
    {"role": "user", "content": [{"text": "list the files"}]},
    {"role": "assistant", "content": [{"toolUse": USE}]},
    {"role": "user", "content": [{"toolResult": RESULT}]},
    {"role": "assistant", "content": [{"text": "Two files: a.py and b.py."}]},
]


def write_devduck_session(path: Path) -> Path:
    """A DevDuck session ZIP as devduck 1.15.7 writes it, with two snapshots: the first after a
    plain exchange (string contents), the second after a Strands tool turn (DevDuck's
    ``agent.messages``)."""
    events = devduck_events()
    stop = events.pop()
    second = {
        "timestamp_ns": T0 + 8 * SECOND,
        "layer": "agent",
        "event_type": "snapshot.created",
        "data": {"snapshot_id": 2, "description": "after ls", "messages_captured": 6},
        "trace_id": None,
    }
    events += [second, stop]
    first = devduck_snapshots()[0]
    snapshots = [
        first,
        {
            **first,
            "timestamp": (T0 + 8 * SECOND) / 1e9,
            "snapshot_id": 2,
            "agent_messages_count": 6,
            "agent_messages": [*first["agent_messages"], *DUCK_TOOL_TURN],
            "last_query": "list the files",
            "last_result": "Two files: a.py and b.py.",
            "description": "after ls",
        },
    ]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("events.jsonl", "\n".join(json.dumps(e) for e in events))
        zf.writestr("snapshots.json", json.dumps(snapshots, indent=2))
        meta = {"session_id": "session-20240203-151052", "serializer": "dill", "total_snapshots": 2}
        zf.writestr("metadata.json", json.dumps(meta, indent=2))
        zf.writestr("session.pkl", pickle.dumps({"events": []}))
    return path


def _strands_agent():
    spec = importlib.util.spec_from_file_location(
        "devduck_resume_strands_agent", EXAMPLES / "strands_agent.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_agent()


@pytest.fixture
def duck_zip(tmp_path):
    return write_devduck_session(tmp_path / "session-20240203-151052.zip")


@pytest.fixture(params=["devduck", "ours"])
def any_zip(request, tmp_path, strands_run):
    """A DevDuck ZIP and one of ours (a Strands run): snapshot 2 of each is a finished tool turn."""
    if request.param == "devduck":
        return write_devduck_session(tmp_path / "session-20240203-151052.zip")
    return strands_run.checkpoint_zip


def test_the_seed_api_works_on_devduck_zips_as_on_ours(any_zip, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
    session = oat.load_session(str(any_zip))
    assert len(session.snapshots) >= 2
    expected = session.get_snapshot(2)["agent_messages"]

    before = session.get_events_until_snapshot(2)
    assert before and session.events[len(before)].event_type in ("snapshot", "snapshot.created")
    assert session.events[len(before)].data["snapshot_id"] == 2

    agent = _strands_agent()
    result = session.resume_from_snapshot(2, agent=agent)
    assert result["messages_restored"] == len(expected) and result.snapshot_id == 2
    assert [m["content"] for m in agent.messages] == [
        m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}] for m in expected
    ]

    llm.reset()
    llm.queue("openai_chat_text_stream")
    agent = _strands_agent()
    done = session.resume_and_continue(snapshot_id=2, new_query=QUESTION, agent=agent)
    assert str(done["agent_result"]).strip() == HELLO
    sent = llm.requests[-1]["body"]["messages"]
    tool_results = [m for m in sent if m["role"] == "tool"]
    assert len(tool_results) == 1 and "Tool was interrupted." not in json.dumps(sent)
    assert json.dumps(sent[-1]["content"]) == json.dumps([{"text": QUESTION, "type": "text"}])
    results = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert results and all(r["status"] == "success" for r in results)


def test_a_devduck_zip_resumes_at_its_first_snapshot_and_the_latest_by_default(duck_zip):
    session = oat.load_session(str(duck_zip))
    agent = _strands_agent()
    first = session.resume_from_snapshot(1, agent=agent)
    assert first.snapshot_id == 1 and first.cut is None
    assert agent.messages == [
        {"role": "user", "content": [{"text": "analyze this code"}]},
        {"role": "assistant", "content": [{"text": "Found 3 issues in full"}]},
    ]
    latest = oat.offline.resume.resume_from_snapshot(session, None, agent=agent)
    assert latest.snapshot_id == 2 and agent.messages[2:] == DUCK_TOOL_TURN
    assert latest.system_prompt == "You are DevDuck..." and latest.cwd == "/tmp"
    with pytest.raises(oat.offline.resume.ResumeError, match=r"no snapshot 3 \(snapshots: 1, 2\)"):
        session.resume_from_snapshot(3, agent=agent)


def test_the_cli_resumes_a_devduck_zip(duck_zip):
    done = cli(
        "resume", str(duck_zip), "--snapshot", "2", "--agent", "strands_agent:make_agent", cwd=EXAMPLES
    )
    assert done.returncode == 0, done.stderr
    assert "restoring session-20240203-151052 at snapshot #2" in done.stdout and ": 6 messages" in done.stdout
    assert "restored into strands; no query given, nothing run" in done.stdout


def test_a_fork_of_a_devduck_zip_says_to_resume_the_zip_itself(duck_zip, tmp_path):
    session = oat.load_session(str(duck_zip))
    result = fork_session(session, session.events[-2].id, tmp_path / "branch.jsonl")
    assert not result.resumable and result.resume_command() is None
    assert result.reason.startswith("a devduck file keeps its conversation in its snapshots")
    assert f"otel-agent-trace resume {duck_zip} --snapshot N" in result.reason
    assert not oat.load_session(str(tmp_path / "branch.jsonl")).snapshots  # indeed: none carried
