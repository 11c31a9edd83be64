"""``otel-agent-trace view`` on real recordings: one line per span with the facts of its kind,
filters, JSON, widths, and what it does with bad input."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import termios

import otel_agent_trace as oat

from .helpers import CLI, RAW_CONTROLS, cli


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _indent(line: str) -> int:
    text = line.split("  ", 1)[1]
    return (len(text) - len(text.lstrip(" "))) // 2


def test_one_line_per_span_with_the_facts_of_each_kind(demo_jsonl):
    lines = _lines(cli("view", str(demo_jsonl)))
    session = oat.load_session(demo_jsonl)
    # every span once: its start entry's id (or its lone end entry's id) opens exactly one line
    for span in session.spans:
        assert sum(line.startswith(f"{span.entry_id}  ") for line in lines) == 1, span.name
    assert not any("└ end" in line or "UNSET" in line for line in lines)

    chats = [line for line in lines if "chat demo-scripted-model [agent]" in line]
    assert len(chats) == 4
    assert "finish=tool_calls" in chats[0] and "asks list_files" in chats[0] and "tokens " in chats[0]
    assert "finish=stop" in chats[-1]
    (listing,) = [line for line in lines if "execute_tool list_files [tool]" in line]
    assert "id=call_demo_001" in listing and "args={" in listing and "demo_agent.py" in listing
    (process,) = [line for line in lines if "process python [sys]" in line]
    assert "--version" in process and "exit=0" in process
    # one span per model call: the HTTP request's facts are on the chat span, no POST line under it
    assert not [line for line in lines if "POST [sys]" in line]
    opened = [line for line in lines if "file.open" in line and "demo_agent.py" in line]
    assert opened and "mode=r" in opened[0]
    # the process and the file open hang under the tool that caused them
    (reading,) = [line for line in lines if "execute_tool read_file [tool]" in line]
    assert _indent(opened[0]) == _indent(reading) + 1
    assert _indent(process) == _indent(next(line for line in lines if "execute_tool run_command" in line)) + 1


def test_the_jsonl_and_the_zip_show_the_same_tree(demo_jsonl, demo_zip):
    assert cli("view", str(demo_jsonl)).stdout == cli("view", str(demo_zip)).stdout


def test_values_are_cut_to_200_columns_on_a_pipe_and_shown_whole_with_full(demo_jsonl):
    lines = _lines(cli("view", str(demo_jsonl)))
    assert max(len(line) for line in lines) <= 200
    assert any(line.endswith("…") for line in lines)
    full = _lines(cli("view", "--full", str(demo_jsonl)))
    (reading,) = [line for line in full if "execute_tool read_file [tool]" in line]
    assert len(reading) > 200 and "through the real ``openai`` client" in reading  # the whole 300-char result


def test_on_a_terminal_lines_fit_its_width(demo_jsonl):
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 72, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([*CLI, "view", str(demo_jsonl)], stdout=terminal, stderr=terminal, env=env)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not chunk:
            break
        output += chunk
    assert proc.wait(timeout=60) == 0
    os.close(controller)
    lines = output.decode().replace("\r\n", "\n").splitlines()
    assert len(lines) > 20
    assert max(len(line) for line in lines) <= 72


def test_filters(demo_jsonl):
    tools = _lines(cli("view", "--layer", "tool", str(demo_jsonl)))
    assert len(tools) == 3 and all("[tool]" in line for line in tools)
    chats = _lines(cli("view", "--type", "chat", str(demo_jsonl)))
    assert len(chats) == 4 and all("chat demo-scripted-model" in line for line in chats)
    files = _lines(cli("view", "--type", "file.open", str(demo_jsonl)))
    assert files and all("file.open" in line for line in files)
    shallow = _lines(cli("view", "--depth", "1", str(demo_jsonl)))
    assert {_indent(line) for line in shallow} == {0, 1}
    assert any("invoke_agent demo-agent" in line for line in shallow)
    assert not _lines(cli("view", "--errors", str(demo_jsonl)))  # the demo has no failure


def test_errors_shows_the_failed_span_with_its_error(hostile_jsonl):
    lines = _lines(cli("view", "--errors", str(hostile_jsonl)))
    failed = [line for line in lines if "[tool]" in line]
    assert (
        len(failed) == 1 and "execute_tool fails" in failed[0] and "ERROR: RuntimeError: broken" in failed[0]
    )
    assert all("ERROR" in line or "exception" in line for line in lines)


def test_json_is_one_object_per_entry(demo_jsonl):
    out = _lines(cli("view", "--json", str(demo_jsonl)))
    entries = [json.loads(line) for line in out]
    assert [e["id"] for e in entries] == [
        json.loads(line)["id"] for line in demo_jsonl.read_text().splitlines()
    ]
    tools = [json.loads(line) for line in _lines(cli("view", "--json", "--layer", "tool", str(demo_jsonl)))]
    assert tools and {e["layer"] for e in tools} == {"tool"}


def test_no_control_sequence_from_the_file_reaches_the_output(hostile_jsonl, hostile_dir):
    for args in (
        ["view", str(hostile_jsonl)],
        ["view", "--full", str(hostile_jsonl)],
        ["view", "--json", str(hostile_jsonl)],
        ["list", str(hostile_dir)],
        ["list", "--json", str(hostile_dir)],
    ):
        done = cli(*args)
        assert done.returncode == 0, (args, done.stderr)
        for raw in RAW_CONTROLS:
            assert raw not in done.stdout and raw not in done.stderr, (args, raw)
    text = cli("view", "--full", str(hostile_jsonl)).stdout
    assert "execute_tool read\\x1b]0;pwned-title\\x07 [tool]" in text  # a tool name, shown escaped
    assert "notes\\x1b[2J\\x9b31m.txt" in text  # a file path
    assert "user\\x1b]0;pwned-title\\x07: " in text  # a message role
    assert "id=call\\x1b[2J1" in text  # a tool-call id
    as_json = cli("view", "--json", str(hostile_jsonl)).stdout
    assert "a\\u001b]52;c;cm0gLXJmIH4=\\u0007b" in as_json  # an attribute value, JSON-escaped
    assert "\\u009b31m" in as_json
    assert all(json.loads(line) for line in as_json.splitlines())


def test_an_unfinished_span_of_a_killed_process_is_marked(tmp_path):
    session = tmp_path / "killed.jsonl"
    session.write_text(
        '{"id":"a-0000","parent_id":"","type":"session.start","layer":"agent","ts":1,"session_id":"s","tier":"trace"}\n'
        '{"id":"a-0001","parent_id":"a-0000","type":"span.start","layer":"tool","ts":2,'
        '"name":"execute_tool slow","span_id":"00000000000000aa","trace_id":"0","attributes":{}}\n'
    )
    lines = _lines(cli("view", str(session)))
    assert lines[1].startswith("a-0001    execute_tool slow [tool] UNFINISHED")


def test_bad_input(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    done = cli("view", str(empty))
    assert done.returncode == 2 and f"{empty}: empty file" in done.stderr and done.stdout == ""

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    done = cli("view", str(fifo), timeout=30)  # a hang would time out
    assert done.returncode == 2 and "not a regular file" in done.stderr

    done = cli("view", str(tmp_path))
    assert done.returncode == 2 and "is a directory" in done.stderr

    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    done = cli("view", str(blank))
    assert done.returncode == 2 and "no session entries" in done.stderr


def test_a_bad_line_is_a_finding_and_lenient_skips_it(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a-0000", "parent_id": "", "type": "session.start", "layer": "agent", "ts": 1}\n'
        "\x1b]0;x\x07 not json\n"
        '{"id": "a-0001", "parent_id": "a-0000", "type": "message", "layer": "agent", "ts": 2, '
        '"role": "user", "content_chars": 3}\n'
    )
    done = cli("view", str(bad))
    assert done.returncode == 1 and f"{bad}:2: not JSON" in done.stderr and "user: <3 chars>" in done.stdout
    assert "\x1b" not in done.stderr
    lenient = cli("view", "--lenient", str(bad))
    assert lenient.returncode == 0 and "skipped 1 bad line" in lenient.stderr
    assert lenient.stdout == done.stdout


def test_foreign_entries_are_one_flat_line_each_never_none(tmp_path):
    """DevDuck's events (``timestamp_ns``, ``event_type``, ``data``; no ids) as its code writes them."""
    devduck = tmp_path / "events.jsonl"
    rows = [
        {
            "timestamp_ns": 1,
            "layer": "agent",
            "event_type": "session.start",
            "data": {"session_id": "d"},
            "trace_id": None,
        },
        *[
            {
                "timestamp_ns": 2 + i,
                "layer": "sys",
                "event_type": "file.open",
                "data": {"path": f"/f{i}", "mode": "r"},
                "trace_id": None,
            }
            for i in range(50)
        ],
        {
            "timestamp_ns": 99,
            "layer": "tool",
            "event_type": "tool.call",
            "data": {"name": "shell", "args": {}},
            "trace_id": None,
        },
    ]
    devduck.write_text("\n".join(json.dumps(r) for r in rows))  # DevDuck writes no final newline
    lines = _lines(cli("view", str(devduck)))
    assert len(lines) == len(rows)
    assert not any("None" in line for line in lines)
    assert [_indent(line) for line in lines] == [0] + [1] * (len(rows) - 1)  # under the root: no staircase
    assert any("file.open [sys] path=/f3 mode=r" in line for line in lines)
    assert any("tool.call shell [tool]" in line for line in lines)


def test_a_devduck_zip_and_a_dm_session_are_viewed_and_listed(tmp_path):
    from tests.offline.samples import write_devduck_zip, write_dm

    devduck = write_devduck_zip(tmp_path / "session-20240203-151052.zip")
    lines = _lines(cli("view", str(devduck)))
    assert not any("None" in line for line in lines)
    assert max(_indent(line) for line in lines) <= 2
    assert sum("file.open" in line for line in lines) == len(
        [e for e in oat.load_session(devduck).events if e.event_type == "file.open"]
    )
    dm = write_dm(tmp_path / "run.jsonl")
    lines = _lines(cli("view", str(dm)))
    assert len(lines) == len(dm.read_text().splitlines()) and not any("None" in line for line in lines)
    listed = cli("list", str(tmp_path))
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 2, listed.stdout


def test_a_deep_tree_prints_in_output_linear_in_its_entries(tmp_path):
    """A chain of spans 5,000 deep: past the drawn depth each line shows its level as a number,
    so ``--full`` writes about as many bytes a line as a flat tree (2 spaces a level would be
    25 MB here, and over 1 GiB for 200,000 levels)."""
    root = {"id": "d-0", "parent_id": "", "type": "session.start", "layer": "agent", "ts": 1}
    root.update(session_id="session-deep", tier="trace", metadata={"format_version": "1.1"})
    lines = [json.dumps(root)]
    for n in range(1, 5_001):
        span = {
            "id": f"d-{n}",
            "parent_id": f"d-{n - 1}",
            "type": "span.start",
            "layer": "agent",
            "ts": 1 + n,
        }
        span.update(name=f"s{n}", trace_id="0" * 32, span_id=f"{n:016x}", attributes={})
        lines.append(json.dumps(span))
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    done = cli("view", "--full", str(path))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) >= 5_001 and len(done.stdout) < 200 * 5_001, len(done.stdout)
    deepest = next(line for line in out if line.startswith("d-5000 "))
    assert "[5000] " in deepest and "s5000" in deepest
    assert next(line for line in out if line.startswith("d-3 ")).startswith("d-3  " + "  " * 3 + "s3")
