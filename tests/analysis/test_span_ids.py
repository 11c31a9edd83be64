"""One span, one id in every command: ``analyze`` (slowest spans, failures), ``report`` and
``view`` name a span by its start entry's id when the file has one, else by its end entry's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.helpers import clean_env

CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]

# Long spans, so their starts are written while they run (the flusher writes a start within
# 100 ms); a failing tool among them. Quick spans ended within the interval have no start entry.
AGENT = """
import time
import otel_agent_trace as oat

@oat.tool
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"

@oat.tool
def broken() -> None:
    time.sleep(0.3)
    raise RuntimeError("broken")

@oat.tool
def quick() -> str:
    return "done"

with oat.session("ids"):
    with oat.agent("sleeper"):
        slow(0.3)
        quick()
        slow(0.4)
        try:
            broken()
        except RuntimeError:
            pass
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)


def test_analyze_report_and_view_name_a_span_by_the_same_id(tmp_path: Path) -> None:
    env = {**clean_env(), "AGENT_TRACE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", AGENT], env=env, check=True, timeout=60, cwd=tmp_path)
    (session,) = tmp_path.glob("session-*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    started = {e["span_id"]: e["id"] for e in entries if e["type"] == "span.start"}
    ended = {e["span_id"]: e["id"] for e in entries if e["type"] == "span.end"}
    assert len(started) >= 4, "the long spans' starts were written"
    assert set(ended) - set(started), "a quick span has no start entry"

    view = _cli("view", str(session))
    assert view.returncode == 0, view.stderr
    shown = {line.split()[0] for line in view.stdout.splitlines() if re.search(r" \[(agent|tool)\] ", line)}
    expected = {started.get(sid, end_id) for sid, end_id in ended.items()}
    assert shown == expected

    analyzed = json.loads(_cli("analyze", "--json", str(session)).stdout)
    slowest = [s["entry_id"] for s in analyzed["slowest"]]
    assert slowest and set(slowest) <= shown, (slowest, shown)
    assert started[next(e["span_id"] for e in entries if e.get("name") == "execute_tool broken")] in slowest
    failure = analyzed["failure"]["first"]
    assert failure["entry_id"] in shown and failure["entry_id"] in started.values()

    report = _cli("report", str(session)).stdout
    assert failure["entry_id"] in report
    end_ids_of_started = set(ended.values()) - expected  # never how a span is named
    assert not end_ids_of_started & set(re.findall(r"[0-9a-f]{8}-[0-9]{4}", report))
