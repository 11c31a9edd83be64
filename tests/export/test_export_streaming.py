"""A session of ours is streamed: a span goes out when its end is read, and open spans past
``MAX_WHOLE_OPEN`` are held as two integers and read again at the end (issue 39, memory). The
compact path must give the same spans as the whole one."""

from __future__ import annotations

import json
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.export import read_session_spans
from tests.offline.hostile import ROOT, entry

from .helpers import cli, record

SESSION = str(ROOT["session_id"])


def _spans(path: Path, max_whole_open: int) -> dict[str, dict]:
    session = read_session_spans(path, max_whole_open=max_whole_open)
    out = {}
    for span in session.spans:
        assert span.span_id not in out, f"{span.span_id} sent twice"
        out[span.span_id] = {
            "trace": span.trace_id,
            "parent": span.parent_span_id,
            "name": span.name,
            "kind": span.kind,
            "start": span.start_ns,
            "end": span.end_ns,
            "status": span.status,
            "attributes": span.attributes,
            "events": [e["name"] for e in span.events],
            "unfinished": span.unfinished,
        }
    out["#unfinished"] = session.unfinished  # type: ignore[assignment]
    return out


def _write(path: Path, *entries: dict) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _hand_made(directory: Path) -> Path:
    """Spans that end, that never end (with events), one ended twice, one whose end came without
    its start, and a child process's file whose own span is left open."""
    sid = lambda n: f"{n:016x}"  # noqa: E731
    main = _write(
        directory / fmt.session_file_name(SESSION, "trace"),
        ROOT,
        entry(1, attributes={"gen_ai.operation.name": "invoke_agent"}),
        entry(2, span_id=sid(2), parent_span_id=sid(1)),
        entry(3, span_id=sid(3), parent_span_id=sid(1)),
        entry(4, "span.event", span_id=sid(3), name="file.open", attributes={"file.path": "/x"}),
        entry(5, "span.event", span_id=sid(2), name="exception"),
        entry(
            6,
            "span.end",
            span_id=sid(2),
            parent_span_id=sid(1),
            duration_ns=4,
            status={"code": "ERROR", "description": "boom"},
            attributes={"k": 1},
        ),  # fmt: skip
        entry(7, "span.end", span_id=sid(2), parent_span_id=sid(1), duration_ns=5),
        entry(8, "span.end", span_id=sid(9), duration_ns=3, attributes={"late": True}),
        entry(9, span_id=sid(10), parent_span_id=sid(1)),
        entry(10, "span.event", span_id=sid(10), name="http.request"),
        entry(11, "message", role="user"),
    )
    _write(
        directory / f"{SESSION}.p4242.jsonl",
        {**ROOT, "id": "abcd0000-0100", "type": fmt.SESSION_JOIN, "ts": int(ROOT["ts"]) + 100},  # type: ignore[arg-type]
        entry(101, span_id=sid(101)),
        entry(102, span_id=sid(102), parent_span_id=sid(101)),
        entry(103, "span.end", span_id=sid(102), parent_span_id=sid(101), duration_ns=1),
        entry(150, "message", role="user"),
    )
    return main


def test_the_compact_path_gives_the_spans_the_whole_one_does(tmp_path):
    path = _hand_made(tmp_path)
    whole = _spans(path, 10_000)
    for limit in (0, 1, 2):
        assert _spans(path, limit) == whole, f"max_whole_open={limit}"
    t0 = int(ROOT["ts"])  # type: ignore[arg-type]
    assert whole["#unfinished"] == 4  # 1, 3 and 10 in the main file; 101 in the child's
    for span_id, end in ((f"{1:016x}", t0 + 11), (f"{10:016x}", t0 + 11), (f"{101:016x}", t0 + 150)):
        assert whole[span_id]["unfinished"] and whole[span_id]["end"] == end
        assert whole[span_id]["attributes"]["agent_trace.unfinished"] is True
    assert whole[f"{1:016x}"]["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert whole[f"{3:016x}"]["events"] == ["file.open"]
    assert whole[f"{10:016x}"]["events"] == ["http.request"]
    ended = whole[f"{2:016x}"]
    assert (ended["start"], ended["end"], ended["events"]) == (t0 + 2, t0 + 6, ["exception"])
    assert ended["status"] == {"code": "ERROR", "description": "boom"} and ended["attributes"] == {"k": 1}
    late = whole[f"{9:016x}"]
    assert (late["start"], late["end"], late["attributes"]) == (t0 + 5, t0 + 8, {"late": True})
    assert not whole[f"{102:016x}"]["unfinished"]


def test_a_real_crash_cut_recording_reads_the_same_either_way(tmp_path):
    path = record(tmp_path, mode="crash")
    whole = _spans(path, 10_000)
    assert whole["#unfinished"] >= 1
    assert _spans(path, 0) == whole
    zipped = path.with_suffix(fmt.ZIP_SUFFIX)
    if zipped.exists():
        assert _spans(zipped, 0) == _spans(zipped, 10_000)


def test_jaeger_json_puts_interleaved_traces_each_in_its_own_entry(tmp_path):
    """Spans of two traces, read interleaved (and one span left open), come out grouped by trace,
    in one valid document, each span once."""
    a, b = "a" * 32, "b" * 32
    sid = lambda n: f"{n:016x}"  # noqa: E731
    path = _write(
        tmp_path / fmt.session_file_name(SESSION, "trace"),
        ROOT,
        entry(1, trace_id=a, span_id=sid(1)),
        entry(2, trace_id=b, span_id=sid(2)),
        entry(3, trace_id=a, span_id=sid(3), parent_span_id=sid(1)),
        entry(4, "span.end", trace_id=a, span_id=sid(3), parent_span_id=sid(1), duration_ns=1),
        entry(5, "span.end", trace_id=b, span_id=sid(2), duration_ns=3),
        entry(6, trace_id=b, span_id=sid(6), parent_span_id=sid(2)),
        entry(7, "span.end", trace_id=b, span_id=sid(6), parent_span_id=sid(2), duration_ns=1),
        entry(8, "span.end", trace_id=a, span_id=sid(1), duration_ns=7),
        entry(9, trace_id=a, span_id=sid(9), parent_span_id=sid(1)),  # never ends
    )
    out = tmp_path / "out.jaeger.json"
    done = cli("export", str(path), "--format", "jaeger-json", str(out))
    assert done.returncode == 0, done.stderr
    assert "wrote 5 spans, 1 unfinished" in done.stdout
    data = json.loads(out.read_text())["data"]
    got = {t["traceID"]: sorted(s["spanID"] for s in t["spans"]) for t in data}
    assert got == {a: [sid(1), sid(3), sid(9)], b: [sid(2), sid(6)]}
    for trace in data:
        assert all(s["traceID"] == trace["traceID"] for s in trace["spans"])
        assert trace["processes"]["p1"]["serviceName"] == "otel-agent-trace"
    refs = {s["spanID"]: s["references"] for t in data for s in t["spans"]}
    assert refs[sid(9)] == [{"refType": "CHILD_OF", "traceID": a, "spanID": sid(1)}]
