"""A model call's messages and automatic snapshot are shown under its chat line, even when they
were written before the call's own start or end entry (its start still queued: they hang under
the parent span's entry and name their span by ``span_id``). On a real Strands run, recorded with
a flush interval long enough that no start is written while a call runs."""

from __future__ import annotations

import re

from tests.fakes.llm_server import FakeLLMServer
from tests.replay.conftest import record

from .helpers import cli


def test_messages_and_snapshots_are_under_their_chat_line(tmp_path):
    with FakeLLMServer() as llm:
        llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
        run = record(
            "strands_agent.py", tmp_path, {"OPENAI_BASE_URL": llm.openai_url, "AGENT_TRACE_FLUSH_MS": "60000"}
        )
    done = cli("view", str(run.checkpoint))
    lines = done.stdout.splitlines()
    depth = [len(m.group(1)) // 2 for m in (re.match(r"\S+  ( *)", line) for line in lines)]
    chats = [i for i, line in enumerate(lines) if re.match(r"\S+ +chat gpt-4o-mini \[", line)]
    snapshots = [i for i, line in enumerate(lines) if re.match(r"\S+ +snapshot #\d+ after chat ", line)]
    assert len(chats) == 2 and len(snapshots) == 2, done.stdout
    for chat, snapshot in zip(chats, snapshots, strict=True):
        assert chat < snapshot, done.stdout  # after its call's line …
        assert depth[snapshot] == depth[chat] + 1, done.stdout  # … and under it
        between = lines[chat + 1 : snapshot]
        assert all(depth[chat + 1 + k] > depth[chat] for k in range(len(between))), done.stdout
