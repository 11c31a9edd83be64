"""Resume, fork, the resume command and the HTML view ask a session's format what they need
(where its conversation is, how it forks, why it cannot be resumed): a format registered with
``register`` is resumed, forked and drawn with no change to them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from otel_agent_trace.cli.listing import find_sessions
from otel_agent_trace.offline import formats, load_session
from otel_agent_trace.offline.fork import fork_session
from otel_agent_trace.offline.html import write_html
from otel_agent_trace.offline.resume import ResumeError, resume_from_snapshot

from .test_format_protocol import TINY_LINES, Tiny, _named

PACKAGE = Path(formats.__file__).parent.parent.parent
ASKERS = [
    "offline/fork.py",
    "offline/html/__init__.py",
    "cli/resume.py",
    "cli/listing.py",
    *(f"offline/resume/{p.name}" for p in sorted((PACKAGE / "offline" / "resume").glob("*.py"))),
]


@pytest.fixture
def tiny(tmp_path):
    format = Tiny()
    path = tmp_path / "run.tiny.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in TINY_LINES))
    formats.register(format)
    try:
        yield path
    finally:
        formats.unregister(format)


@pytest.mark.parametrize("module", ASKERS)
def test_no_time_travel_module_names_a_format(module):
    named = _named(ast.parse((PACKAGE / module).read_text()))
    # (``list`` shows the format of a file that is not ours: it alone asks whether it is ours)
    ours = () if module == "cli/listing.py" else ("native",)
    assert not named & {"devduck", "dm", "_is_native", *ours}, module
    assert not any(n.endswith((".devduck", ".dm", *(f".{o}" for o in ours))) for n in named), module


def test_a_registered_format_is_resumed_from_its_snapshots(tiny):
    session = load_session(tiny)
    messages: list = []
    restored = resume_from_snapshot(session, agent=messages)
    assert restored.snapshot_id == 1 and restored.entry_id == "tiny-3"
    assert messages == [{"role": "user", "content": "list the files"}]
    assert restored.target == "openai_messages"
    with pytest.raises(ResumeError, match=r"no snapshot 2 \(snapshots: 1\)"):
        resume_from_snapshot(session, 2)


def test_a_registered_format_forks_as_it_says(tiny):
    session = load_session(tiny)
    result = fork_session(session, "tiny-3")
    assert result.path == tiny.with_name("tiny-session-1.fork-tiny-3.jsonl")
    assert result.entries_copied == 4 and not result.resumable
    assert result.reason.startswith("a tiny-test file keeps its conversation in its snapshots")
    forked = load_session(result.path)  # written as our entries, the fork entry last
    assert [e.id for e in forked.events][:4] == ["tiny-0", "tiny-1", "tiny-2", "tiny-3"]
    assert forked.events[-1].type == "fork" and forked.events[-1].data["forked_from_entry_id"] == "tiny-3"


def test_a_registered_formats_page_draws_its_own_entries(tiny, tmp_path):
    page = write_html(tiny, tmp_path / "tiny.html").read_text()
    assert "execute_tool ls" in page and "execute_tool cat" in page and "no such file" in page


def test_a_registered_formats_file_is_listed_as_it_says(tiny):
    (found,) = find_sessions(tiny.parent)
    assert found.session_id == "tiny-session-1" and found.foreign == "tiny-test"
    assert found.complete and found.status == "bye" and found.start_ts == 1.0
