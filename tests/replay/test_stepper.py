"""The stepper in a real terminal (tmux, driven with send-keys and read with capture-pane): next,
back, breakpoints on a tool name, an event type and an error, continue, jump by prefix, show an
entry in full, the conversation there; and a polite refusal without a terminal."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from otel_agent_trace.offline import load_session

from .conftest import REPO, cli

TMUX = shutil.which("tmux")


class Pane:
    """One tmux session on a private socket running a command."""

    def __init__(self, command: list[str], cwd):
        self.socket = f"oat-step-{uuid.uuid4().hex[:8]}"
        env = f"PYTHONPATH={shlex.quote(str(REPO))} "
        self._tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "60", "-c", str(cwd),
                   env + " ".join(shlex.quote(c) for c in command))  # fmt: skip
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        assert TMUX, "the stepper is tested in a real terminal: install tmux (apt-get install -y tmux)"
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        return done.stdout

    def send(self, keys: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", keys)
        self._tmux("send-keys", "-t", "t", "Enter")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t", "-S", "-2000")

    def wait_for(self, text: str, times: int = 1, deadline: float = 180.0) -> str:
        """Poll the pane until ``text`` shows ``times`` times (a generous deadline on a shared
        machine: this checks what is shown, not how fast)."""
        end = time.monotonic() + deadline
        while True:
            screen = self.screen()
            if screen.count(text) >= times:
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never appeared; the pane shows:\n{screen}")
            time.sleep(0.1)

    def wait_for_exit(self, deadline: float = 180.0) -> None:
        """Poll until the pane's process has exited (tmux's ``pane_dead``: the text tmux shows for
        a dead pane depends on its version and options)."""
        end = time.monotonic() + deadline
        while self._tmux("list-panes", "-t", "t", "-F", "#{pane_dead}").strip() != "1":
            if time.monotonic() > end:
                raise AssertionError(f"the stepper never exited; the pane shows:\n{self.screen()}")
            time.sleep(0.1)

    def close(self) -> None:
        self._tmux("kill-server")


@pytest.fixture
def pane_for(tmp_path):
    panes = []

    def start(path):
        pane = Pane(
            [sys.executable, "-m", "otel_agent_trace.cli.main", "replay", "--step", str(path)], tmp_path
        )
        panes.append(pane)
        return pane

    yield start
    for pane in panes:
        pane.close()


def test_stepping_through_a_session_in_a_terminal(notes, pane_for):
    session = load_session(notes.checkpoint)
    ids = [e.id for e in session.events]
    pane = pane_for(notes.checkpoint)
    pane.wait_for(f"[1/{len(ids)}] {ids[0]}")
    pane.send("n")
    pane.wait_for(f"[2/{len(ids)}] {ids[1]}")
    pane.send("b")
    pane.wait_for(f"[1/{len(ids)}] {ids[0]}", times=2)

    pane.send("break tool count_words")
    pane.wait_for("breakpoint set: tool count_words")
    pane.send("c")
    screen = pane.wait_for("breakpoint: tool count_words")
    # The call's entries: its start and end, or one span.end when the call ended before its start
    # was written (format 1.2: a tool call with nothing under it).
    calls = [e for e in session.events if e.data.get("name") == "execute_tool count_words"]
    assert [e.type for e in calls] in (["span.start", "span.end"], ["span.end"])
    assert f"{calls[0].id} tool  {calls[0].type} execute_tool count_words" in screen

    pane.send("s")
    pane.wait_for('"agent_trace.tool.import_path": "notes_tools:count_words"')
    pane.send("conv")
    screen = pane.wait_for('  assistant: {"tool": "count_words"')  # the conversation as it stood there
    assert '  tool: "Replay runs the recorded tools again' in screen
    if len(calls) == 2:
        pane.send("c")  # a tool breakpoint stops at each of the call's entries: its start, its end
        pane.wait_for(f"{calls[1].id} tool  span.end execute_tool count_words")
    pane.send("clear")
    pane.send("break error")
    pane.send("c")
    screen = pane.wait_for("breakpoint: error")
    assert "exception exception.type=ZeroDivisionError" in screen.split("breakpoint: error")[-1]
    pane.send("c")  # then the failed call's end
    screen = pane.wait_for("span.end execute_tool divide")
    assert "ERROR" in screen.split("span.end execute_tool divide")[-1].splitlines()[0]

    last = ids[-1]
    pane.send(f"j {last}")
    pane.wait_for(f"[{len(ids)}/{len(ids)}] {last}")
    pane.send("j zzz")
    pane.wait_for("no entry matches 'zzz'")
    pane.send("q")
    pane.wait_for_exit()


def test_without_a_terminal_it_refuses_politely(notes, tmp_path):
    done = cli("replay", "--step", str(notes.checkpoint), cwd=tmp_path)
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "Traceback" not in done.stderr
    assert os.getcwd()


def test_break_tool_stops_where_a_strands_tool_is_called(llm, tmp_path):
    """Strands' tool span starts with no attributes (its start entry names no tool): the
    breakpoint still stops at that start, where the tool is called, then at its end. (Recorded
    with every start written at once, ``AGENT_TRACE_FLUSH_MS=0``: a quick tool's start is
    otherwise written only if a flush comes while it runs.)"""
    from otel_agent_trace.offline.replay.stepper import Stepper

    from .conftest import record

    llm.reset()
    llm.queue("openai_chat_tool_call_stream", "openai_chat_final_stream")
    run = record(
        "strands_agent.py", tmp_path, {"OPENAI_BASE_URL": llm.openai_url, "AGENT_TRACE_FLUSH_MS": "0"}
    )
    out: list[str] = []
    stepper = Stepper(load_session(run.checkpoint), out=out.append)
    stepper.handle("break tool get_weather")
    stepper.handle("c")
    start = stepper.events[stepper.pos]
    assert start.type == "span.start" and start.data["name"] == "execute_tool get_weather"
    assert "gen_ai.tool.name" not in (start.data.get("attributes") or {})  # what made it missed
    assert "breakpoint: tool get_weather" in out
    stepper.handle("c")
    end = stepper.events[stepper.pos]
    assert end.type == "span.end" and end.data["span_id"] == start.data["span_id"]
