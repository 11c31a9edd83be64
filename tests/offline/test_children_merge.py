"""A session's ``.jsonl`` is loaded with its child processes' files, as its ``.zip`` holds them:
both load to equal events, snapshots and conversations (a real recorded run with a forked child)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import iter_entries, load_session
from tests.e2e.helpers import REPO, only_session, run_instrumented

AGENT = Path(__file__).parent / "agents" / "model_and_fork.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path, list[Path]]:
    cwd = tmp_path_factory.mktemp("run")
    done = run_instrumented(AGENT, cwd, None, str(REPO))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    directory = cwd / "agent-sessions"
    jsonl = only_session(directory)
    session_id = jsonl.name.removesuffix(fmt.JSONL_SUFFIX)
    children = sorted(directory.glob(f"{session_id}.p*{fmt.JSONL_SUFFIX}"))
    return jsonl, directory / f"{session_id}.zip", children


def test_jsonl_with_its_children_and_zip_load_equal(recorded):
    jsonl, zip_path, children = recorded
    assert children, "the forked child recorded nothing"
    a, b = load_session(jsonl), load_session(zip_path)
    assert [e.data for e in a.events] == [e.data for e in b.events]
    assert a.snapshots == b.snapshots and len(a.snapshots) >= 2
    assert a.conversation() == b.conversation() != []
    for event in a.events[::7]:  # the conversation at any entry
        assert a.conversation(event.id) == b.conversation(event.id)
    assert a.complete and b.complete and a.session_id == b.session_id
    assert [(s.span_id, s.name, s.duration_ns) for s in a.spans] == [
        (s.span_id, s.name, s.duration_ns) for s in b.spans
    ]

    # The child's own work is in both: its tool call and its model call under its session.join.
    joins = a.get_events_by_type(fmt.SESSION_JOIN)
    assert len(joins) == len(children)
    child_tools = [
        s
        for s in a.spans
        if s.name == "execute_tool square"
        and any(anc.type == fmt.SESSION_JOIN for anc in a.ancestors(s.entry_id))
    ]
    assert len(child_tools) == 1
    assert sum(s.name.startswith("chat") for s in a.spans) == 3
    # The forked child also ended the agent span it inherited (SystemExit): the parent's end counts.
    agent = next(s for s in a.spans if s.name == "invoke_agent forker")
    assert agent.status != fmt.STATUS_ERROR and agent.entry_id.startswith(a.root.id.split("-")[0])
    assert sum(1 for _ in iter_entries(jsonl)) == len(a.events)  # the stream merges them too


def test_a_child_file_loads_on_its_own(recorded):
    _, _, children = recorded
    child = load_session(children[0])
    assert child.root.type == fmt.SESSION_JOIN
    assert all(e.data.get("session_id") in (None, child.session_id) for e in child.events[:1])
    assert sum(s.name == "execute_tool square" for s in child.spans) == 1


def test_children_are_left_out_on_request_and_for_a_renamed_file(recorded, tmp_path):
    jsonl, _, children = recorded
    parent_only = sum(1 for _ in iter_entries(jsonl, children=False))
    child_entries = sum(1 for c in children for _ in iter_entries(c))
    assert parent_only + child_entries == len(load_session(jsonl).events)
    renamed = jsonl.parent / "copy-of-session.jsonl"  # not named by its session: no children
    renamed.write_bytes(jsonl.read_bytes())
    assert len(load_session(renamed).events) == parent_only
