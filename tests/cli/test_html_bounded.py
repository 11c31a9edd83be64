"""``view --html`` of a large session: written as the file is read (memory bounded by the spans
running at once), and the page says what it left out (spans past the first 20,000, long values)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from otel_agent_trace.offline import html

from .chromium import dump_dom
from .helpers import cli

T0 = 1_000_000_000_000_000_000
SID = "session-20260101-000000-abcd0000"


def _write_session(path: Path, spans: int, pad: int) -> None:
    """An agent span running the whole time, with ``spans`` tool calls under it (start, a file
    event, end with ``pad`` characters of result each) and one 100,000-character argument."""

    def line(n: int, etype: str, **fields: object) -> bytes:
        entry = {
            "id": f"abcd0000-{n:07d}",
            "parent_id": "abcd0000-0000000",
            "type": etype,
            "ts": T0 + n * 1000,
        }
        entry.update(fields)
        return orjson.dumps(entry) + b"\n"

    tool_attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file"}
    with open(path, "wb", buffering=1 << 20) as out:
        out.write(line(0, "session.start", layer="agent", session_id=SID, tier="trace", metadata={}))
        out.write(
            line(1, "span.start", layer="agent", name="invoke_agent a", span_id="a" * 16, parent_span_id=None,
                 attributes={"gen_ai.operation.name": "invoke_agent"})
        )  # fmt: skip
        n = 2
        for call in range(spans):
            sid = f"{call + 1:016x}"
            out.write(
                line(n, "span.start", layer="tool", name="execute_tool read_file", span_id=sid,
                     parent_span_id="a" * 16, attributes=tool_attrs)
            )  # fmt: skip
            out.write(
                line(n + 1, "span.event", layer="sys", name="file.open", span_id=sid,
                     attributes={"file.path": f"src/m{call}.py", "agent_trace.file.access": "read"})
            )  # fmt: skip
            args = {"path": f"src/m{call}.py", "big": "y" * 100_000 if call == 0 else ""}
            out.write(
                line(n + 2, "span.end", layer="tool", name="execute_tool read_file", span_id=sid,
                     parent_span_id="a" * 16, duration_ns=2000, status={"code": "UNSET"},
                     attributes=tool_attrs, content={"tool_arguments": args, "tool_result": "x" * pad})
            )  # fmt: skip
            n += 3
        # the agent span never ends: the run was killed


def test_large_session_page_in_bounded_memory(tmp_path):
    """A 70 MB session (40,000 tool calls): the page holds the first 20,000 spans and stays far
    below the file's size in memory (loading it whole took about 5 times its size)."""
    session = tmp_path / f"{SID}.jsonl"
    _write_session(session, 40_000, 1_500)
    assert session.stat().st_size > 65_000_000
    page = tmp_path / "page.html"
    code = textwrap.dedent(
        f"""
        import resource
        from otel_agent_trace.offline.html import write_html
        write_html({str(session)!r}, {str(page)!r})
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, otel_agent_trace.offline.html;"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    grown_mb = (int(done.stdout) - int(baseline.stdout)) / 1024
    assert grown_mb < 40, grown_mb
    text = page.read_text()
    spans = re.search(r'id="session-spans">(.*?)</script>', text, re.S)
    facts = re.search(r'id="session-data">(.*?)</script>', text, re.S)
    assert spans and facts
    drawn = orjson.loads(spans.group(1))
    data = orjson.loads(facts.group(1))
    assert len(drawn) == html.MAX_SPANS and data["spans_total"] == 40_001
    assert data["values_cut"] >= 1 and not data["complete"]
    big = next(s for s in drawn if s["id"] == f"{1:016x}")
    assert big["content"]["tool_arguments"]["big"].endswith("… [96000 more characters]")
    agent = next(s for s in drawn if s["id"] == "a" * 16)
    assert not agent["finished"] and agent["end"] >= max(s["end"] for s in drawn)
    assert len(text) < 80_000_000


@pytest.mark.chromium
def test_the_page_says_what_it_left_out(tmp_path):
    session = tmp_path / f"{SID}.jsonl"
    _write_session(session, 3, 10)
    page = tmp_path / "page.html"
    done = cli("view", str(session), "--html", str(page))
    assert done.returncode == 0, done.stderr
    dom = dump_dom(page)
    body = re.search(r"<body[^>]*>", dom)
    assert body and 'data-rendered-spans="4"' in body.group(0) and "data-script-error" not in body.group(0)
    note = re.search(r'<div class="fact" id="left-out">([^<]*)</div>', dom)
    assert note, dom[-3000:]
    assert "1 values cut to 4000 characters" in note.group(1)
    assert f"otel-agent-trace view --full {session.name}" in note.group(1)
    assert "UNFINISHED" in dom  # the agent span that never ended


def test_no_page_is_left_by_a_bad_file(tmp_path):
    session = tmp_path / f"{SID}.jsonl"
    _write_session(session, 3, 10)
    with session.open("ab") as f:
        f.write(b"not json\n" + orjson.dumps({"id": "x", "type": "message", "ts": 1}) + b"\n")
    page = tmp_path / "page.html"
    done = cli("view", str(session), "--html", str(page))
    assert done.returncode == 2 and f"{session.name}:12: not JSON" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == [session]  # neither the page nor its temporary file


@pytest.mark.chromium
def test_devduck_and_dm_sessions_drawn(tmp_path):
    """A DevDuck ZIP and a DM-Code-Agent JSONL: their tool calls (and DM's run and model call)
    are spans on the page."""
    from tests.offline import samples

    duck = samples.write_devduck_zip(tmp_path / "duck.zip")
    dm = samples.write_dm(tmp_path / "dm.jsonl")
    for session, spans, names in (
        (duck, 2, ("execute_tool shell", "GET")),
        (
            dm,
            4,
            ("invoke_agent dm-agent", "chat deepseek", "execute_tool read_file", "execute_tool run_tests"),
        ),
    ):
        page = tmp_path / f"{session.name}.html"
        done = cli("view", str(session), "--html", str(page))
        assert done.returncode == 0, done.stderr
        dom = dump_dom(page)
        body = re.search(r"<body[^>]*>", dom)
        assert body and f'data-rendered-spans="{spans}"' in body.group(0), body
        assert "data-script-error" not in body.group(0)
        for name in names:
            assert name in dom, name


def _write_chatty_session(path: Path, calls: int, per_call: int, chars: int) -> None:
    """A checkpoint-tier session of ``calls`` model calls, each after ``per_call`` new messages of
    ``chars`` characters, its input the last 50 messages (a context kept short) and one output."""
    n = 0

    def line(etype: str, **fields: object) -> bytes:
        nonlocal n
        entry = {"id": f"abcd0000-{n:07d}", "parent_id": "abcd0000-0000000" if n else "", "type": etype}
        entry["ts"] = T0 + n * 1000
        entry.update(fields)
        n += 1
        return orjson.dumps(entry) + b"\n"

    chat = {"gen_ai.operation.name": "chat"}
    ids: list[str] = []
    with open(path, "wb", buffering=1 << 20) as out:
        out.write(line("session.start", layer="agent", session_id=SID, tier="checkpoint", metadata={}))
        for call in range(calls):
            sid = f"{call + 1:016x}"
            for _ in range(per_call):
                ids.append(f"abcd0000-{n:07d}")
                out.write(
                    line("message", layer="agent", role="user", content="m" * chars, content_chars=chars)
                )
            answer = f"abcd0000-{n:07d}"
            out.write(line("message", layer="agent", role="assistant", content="a" * 50, content_chars=50))
            content = {"input_message_ids": ids[-50:], "output_message_ids": [answer]}
            out.write(line("span.start", layer="agent", name="chat m", span_id=sid, attributes=chat))
            out.write(
                line("span.end", layer="agent", name="chat m", span_id=sid, duration_ns=500,
                     status={"code": "UNSET"}, attributes=chat, content=content)
            )  # fmt: skip
            ids.append(answer)


def test_a_session_of_many_messages_in_bounded_memory(tmp_path):
    """60 MB of message text: the page keeps 20 million characters of it whole, the rest cut
    short (counted), in memory far below the text's size."""
    session = tmp_path / f"{SID}.checkpoint.jsonl"
    _write_chatty_session(session, 3_000, 10, 2_000)
    page = tmp_path / "page.html"
    code = textwrap.dedent(
        f"""
        import resource
        from otel_agent_trace.offline.html import write_html
        write_html({str(session)!r}, {str(page)!r})
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource, otel_agent_trace.offline.html;"
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (int(done.stdout) - int(baseline.stdout)) / 1024 < 40
    text = page.read_text()
    data = orjson.loads(re.search(r'id="session-data">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
    messages = orjson.loads(re.search(r'id="session-messages">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
    turns = orjson.loads(re.search(r'id="session-turns">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
    assert data["messages"] == len(messages) == 33_000 and data["full_text"]
    assert data["message_texts_cut"] > 0
    assert sum(len(m["text"] or "") for m in messages) < 30_000_000
    assert len(turns) == data["turns"] == 3_000
    roles = {m["id"]: m["role"] for m in messages}
    listed: list[str] = []
    for number, turn in enumerate(turns):  # each written against the one before: rebuilt so
        listed = listed[: turn["keep"]] + turn["add"]
        assert len(listed) == turn["count"] == min(50, 11 * number + 10) + 1
        assert [roles[i] for i in listed[-2:]] == ["user", "assistant"]
    assert len(text) < 60_000_000
