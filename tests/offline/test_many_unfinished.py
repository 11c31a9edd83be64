"""Issue 39, memory case 4: a crashed run that leaves many spans open. ``analyze``, ``report``,
``diff`` and ``view`` keep a few small records per running span, never its whole start entry, and
say the same as before about every one of them: each is counted, listed by id, closed in ``view``.
The million-span file itself is measured in tests/offline/test_dense_inputs.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from otel_agent_trace.cli.view import NAMES_KEPT
from otel_agent_trace.offline.analysis.summary import OPEN_DESCRIBED, UNFINISHED_KEPT

from . import hostile

CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]


def _crashed(path: Path, count: int, *, model_under: int | None = None) -> Path:
    """``count`` spans started, none ended: span ``k`` is named ``step-k`` and starts at ``ts0 + k``;
    the file's first span is an agent's run, the others under it."""
    agent = hostile.entry(1, name="invoke_agent helper", attributes={"gen_ai.operation.name": "invoke_agent"})
    spans = [agent]
    for seq in range(2, count + 1):
        spans.append(hostile.entry(seq, name=f"step-{seq}", parent_span_id=agent["span_id"]))
    return hostile.jsonl(path, hostile.ROOT, *spans)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


def test_analyze_counts_every_running_span_and_lists_the_first_by_start(tmp_path):
    count = OPEN_DESCRIBED + 500
    path = _crashed(tmp_path / "crashed.jsonl", count)
    done = _cli("analyze", "--json", str(path))
    result = json.loads(done.stdout)
    unfinished = result["unfinished"]
    assert unfinished["count"] == count
    spans = unfinished["spans"]
    assert len(spans) == UNFINISHED_KEPT
    assert [s["name"] for s in spans[:3]] == ["invoke_agent helper", "step-2", "step-3"]
    assert [s["entry_id"] for s in spans] == [f"abcd0000-{seq:04d}" for seq in range(1, UNFINISHED_KEPT + 1)]
    assert spans[0]["kind"] == "agent" and spans[1]["kind"] == "other"
    assert result["status"] == "incomplete"
    assert f"({count} unfinished spans)" in " ".join(result["health"]["reasons"])


def test_spans_beyond_the_described_are_still_listed_by_id(tmp_path):
    """More than OPEN_DESCRIBED running at once (the first ones ended): the later ones are listed
    by entry id and kind, their names not kept, after those described."""
    count = OPEN_DESCRIBED + 20
    entries = [hostile.ROOT]
    for seq in range(1, count + 1):
        entries.append(hostile.entry(seq, name=f"step-{seq}"))
    ended = range(1, OPEN_DESCRIBED - 10)  # all but 10 of the described end: 30 remain running
    for seq in ended:
        entries.append(
            hostile.entry(count + seq, "span.end", name=f"step-{seq}", span_id=f"{seq:016x}", duration_ns=5)
        )
    path = hostile.jsonl(tmp_path / "many.jsonl", *entries)
    result = json.loads(_cli("analyze", "--json", str(path)).stdout)
    spans = result["unfinished"]["spans"]
    assert result["unfinished"]["count"] == 31
    assert [s["name"] for s in spans[:11]] == [
        f"step-{seq}" for seq in range(OPEN_DESCRIBED - 10, OPEN_DESCRIBED + 1)
    ]
    assert [s["name"] for s in spans[11:]] == [None] * 20
    assert [s["entry_id"] for s in spans[11:]] == [
        f"abcd0000-{seq:04d}" for seq in range(OPEN_DESCRIBED + 1, count + 1)
    ]
    assert {s["kind"] for s in spans[11:]} == {"other"}
    text = _cli("analyze", str(path)).stdout
    assert "unfinished spans: 31\n" in text
    assert f"  step-{OPEN_DESCRIBED - 10} [agent] started at " in text and "None" not in text


def test_view_closes_every_span_left_open_with_its_id(tmp_path):
    count = NAMES_KEPT + 600
    path = _crashed(tmp_path / "crashed.jsonl", count)
    done = _cli("view", str(path))
    assert done.returncode == 0, done.stderr
    closing = [line for line in done.stdout.splitlines() if line.rstrip().endswith("UNFINISHED")]
    assert len(closing) == count
    ids = {line.split()[0]: line for line in closing}
    assert sorted(ids) == sorted(f"abcd0000-{seq:04d}" for seq in range(1, count + 1))
    assert re.search(r"abcd0000-0001\s+└ invoke_agent helper UNFINISHED$", ids["abcd0000-0001"])
    assert ids["abcd0000-0002"].split()[-2:] == ["step-2", "UNFINISHED"]
    # past NAMES_KEPT open at once, a closing line names the span by its id only
    unnamed = [eid for eid, line in ids.items() if line.split()[-2:] == ["…", "UNFINISHED"]]
    assert unnamed and all(int(eid.split("-")[1]) > NAMES_KEPT for eid in unnamed)


def test_view_with_a_filter_closes_only_what_it_showed(tmp_path):
    path = _crashed(tmp_path / "crashed.jsonl", 800)
    done = _cli("view", "--type", "invoke_agent", str(path))
    closing = [line for line in done.stdout.splitlines() if "UNFINISHED" in line]
    assert len(closing) == 1 and "invoke_agent helper" in closing[0]
