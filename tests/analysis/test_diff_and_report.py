"""``diff`` (two recorded runs, aligned by LCS) and ``report`` (a Markdown report of one run)."""

from __future__ import annotations

import json
import re

from otel_agent_trace.offline.analysis import compare
from otel_agent_trace.offline.analysis.diff import lcs_opcodes
from tests.analysis.conftest import cli


def test_diff_aligns_the_tool_sequences(recorded):
    result = compare(recorded["fixed_direct"], recorded["fixed"])
    seq = result["action_sequence"]
    assert (seq["base_length"], seq["candidate_length"]) == (3, 4)
    # one read inserted before the same three steps: one change, the rest aligned
    assert seq["common_prefix"] == 0 and seq["common"] == 3
    assert seq["changes"] == [
        {"op": "insert", "base_index": 0, "candidate_index": 0, "base": [], "candidate": ["read_file"]}
    ]
    assert result["tool_usage"]["delta"] == {"read_file": {"base": 0, "candidate": 1, "delta": 1}}
    assert result["metrics"]["model_calls"] == {"base": 3, "candidate": 5, "delta": 2}
    assert result["metrics"]["failures"]["delta"] == 2
    assert not result["final_answer_changed"]  # same text, compared by its hash
    assert not result["status_changed"]
    assert result["different"]


def test_diff_cli_exit_codes(recorded):
    same = cli("diff", str(recorded["fixed"]), str(recorded["fixed"]))
    assert same.returncode == 0, same.stderr
    assert same.stdout.rstrip().endswith("same")
    changed = cli("diff", str(recorded["fixed"]), str(recorded["failing_tests"]))
    assert changed.returncode == 1
    assert "final answer: changed" in changed.stdout
    assert "final failure stage none → verification" in changed.stdout
    data = json.loads(cli("diff", "--json", str(recorded["loop"]), str(recorded["fixed"])).stdout)
    assert data["tool_usage"]["delta"]["read_file"] == {"base": 4, "candidate": 1, "delta": -3}
    missing = cli("diff", str(recorded["fixed"]), "/nonexistent/x.jsonl")
    assert missing.returncode == 2 and "no such session file" in missing.stderr


def test_lcs_is_not_position_by_position():
    base = ["read", "edit", "test", "answer"]
    candidate = ["plan", "read", "edit", "test", "answer"]
    ops, exact = lcs_opcodes(base, candidate)
    assert exact
    assert ops == [("insert", 0, 0, 0, 1), ("equal", 0, 4, 1, 5)]


def test_report_markdown(recorded, tmp_path):
    out = tmp_path / "report.md"
    done = cli("report", str(recorded["fixed"]), "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("# Session report: session-")
    assert "| status | ok |" in text and "| model calls | 5 |" in text
    steps = [line.split(" | ") for line in text.splitlines() if re.match(r"\| \d+ \| ", line)]
    tools = [cells[3] for cells in steps if cells[2] == "tool"]
    assert tools == ["read\\_file", "write\\_file", "write\\_file", "run\\_shell"]
    assert sum(cells[2] == "model" for cells in steps) == 5
    assert "## Final answer" in text and "## Failures" in text and "FileNotFoundError" in text
    assert "primary stage **model**" in text
    again = cli("report", str(recorded["fixed"]), "-o", str(out))
    assert again.returncode == 2 and "exists" in again.stderr  # never overwritten
    assert out.read_text() == text


def test_report_of_the_checkpoint_tier_has_the_answer(recorded):
    checkpoint = recorded["fixed"].with_name(recorded["fixed"].name.replace(".jsonl", ".checkpoint.jsonl"))
    done = cli("report", str(checkpoint))
    assert done.returncode == 0, done.stderr
    assert "```text\nFixed: add works and the test passes.\n```" in done.stdout
