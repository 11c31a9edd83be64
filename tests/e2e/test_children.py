"""Forked processes (multiprocessing workers, ``os.fork``) record into child files of the same
session instead of writing the parent's file with the parent's ids."""

from __future__ import annotations

import zipfile
from collections import Counter

import orjson

from otel_agent_trace import session_format as fmt

from .helpers import AGENTS, assert_one_tree, load, only_session, run_instrumented


def test_forked_children_write_their_own_files_joined_to_the_session(tmp_path):
    done = run_instrumented(AGENTS / "forking_agent.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[4, 9, 16, 25]"
    directory = tmp_path / "agent-sessions"
    parent_path = only_session(directory)
    parent = load(parent_path)
    assert parent.complete
    assert_one_tree(parent)  # before the fix: the children's entries reused the parent's ids here
    session_id = parent.session_id
    agent = next(s for s in parent.spans if s.name == "invoke_agent forker")

    children = sorted(directory.glob(f"{session_id}.p*.jsonl"))
    assert children, "the forked processes recorded nothing"
    child_squares = 0
    own = list(fmt.iter_entries(parent_path))  # the parent's file alone (load() merges children)
    all_ids: Counter[str] = Counter(e["id"] for e in own)
    for path in children:
        child = load(path)
        join = child.events[0]
        # The join continues the tree from the parent's entry of the span the child was forked
        # under, so the session's files together are one tree.
        assert join.type == fmt.SESSION_JOIN and join.parent_id == agent.entry_id
        assert join.data["session_id"] == session_id
        assert join.data["metadata"]["parent_span_id"] == agent.span_id
        for event in child.events[1:]:
            assert event.parent_id in {e.id for e in child.events}
        child_squares += sum(s.name == "execute_tool square" and s.finished for s in child.spans)
        all_ids.update(e.id for e in child.events)
    assert child_squares == 4  # three pool tasks and the os.fork child
    assert [i for i, n in all_ids.items() if n > 1] == [], "entry ids collide across the session's files"
    own_squares = [e for e in own if e["type"] == fmt.SPAN_END and e.get("name") == "execute_tool square"]
    assert len(own_squares) == 2
    # Loaded with its children, the session is one tree holding every square.
    assert sum(s.name == "execute_tool square" and s.finished for s in parent.spans) == 6

    # Only the parent exports the ZIP, with the children's files after its own.
    zips = sorted(directory.glob("*.zip"))
    assert [z.name for z in zips] == [f"{session_id}.zip"]
    with zipfile.ZipFile(zips[0]) as zf:
        lines = zf.read(fmt.ZIP_EVENTS).splitlines()
    roots = [orjson.loads(line)["type"] for line in lines if orjson.loads(line)["parent_id"] == ""]
    assert roots == [fmt.SESSION_START]  # one tree: every child's join hangs under a parent entry
    ids = {orjson.loads(line)["id"] for line in lines}
    joins = [orjson.loads(line) for line in lines if orjson.loads(line)["type"] == fmt.SESSION_JOIN]
    assert len(joins) == len(children) and all(j["parent_id"] in ids for j in joins)


def test_a_forked_child_that_exits_through_the_parents_span_does_not_end_it(tmp_path):
    """The ``os.fork`` child of forking_agent.py leaves by ``sys.exit`` through the parent's
    ``with oat.agent(...)`` block: the agent span is the parent's, ended once, by the parent (no
    ``span.end`` of it, nor the ``SystemExit``, in any child file)."""
    done = run_instrumented(AGENTS / "forking_agent.py", tmp_path)
    assert done.returncode == 0, done.stderr
    directory = tmp_path / "agent-sessions"
    parent_path = only_session(directory)
    own = list(fmt.iter_entries(parent_path))
    started_here = {e["span_id"] for e in own if e["type"] in (fmt.SPAN_START, fmt.SPAN_END)}
    agent = next(e for e in own if e["type"] == fmt.SPAN_START and e.get("name") == "invoke_agent forker")
    ends: Counter[str] = Counter(e["span_id"] for e in own if e["type"] == fmt.SPAN_END)
    children = sorted(directory.glob(f"{parent_path.name[: -len(fmt.JSONL_SUFFIX)]}.p*.jsonl"))
    assert len(children) >= 2
    for path in children:
        for entry in fmt.iter_entries(path):
            if entry["type"] == fmt.SPAN_END:
                assert entry["span_id"] not in started_here, f"{path.name} ends the parent's span {entry}"
                ends[entry["span_id"]] += 1
            if entry["type"] == fmt.SPAN_EVENT:
                assert entry.get("name") != "exception", f"{path.name}: the child's exit on a parent's span"
    assert ends[agent["span_id"]] == 1
    assert [sid for sid, n in ends.items() if n > 1] == []


_FORK_SIGNALS = """
import os, signal
import otel_agent_trace as oat

with oat.tool("before fork"):  # the session is recording, its SIGTERM handler installed
    pass
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(write, b"default" if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else b"handler")
    os._exit(0)
os.waitpid(pid, 0)
child = os.read(read, 16).decode()
parent = "default" if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else "handler"
print(parent, child)
"""


def test_a_forked_worker_dies_of_sigterm_as_without_us(tmp_path):
    """multiprocessing's ``Pool.terminate()`` relies on SIGTERM killing its workers; a Python
    handler in a worker blocked on its queue can miss it and hang the pool: children forked
    without exec get the default disposition back (the parent keeps its handler)."""
    script = tmp_path / "fork_signals.py"
    script.write_text(_FORK_SIGNALS)
    done = run_instrumented(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["handler", "default"]
