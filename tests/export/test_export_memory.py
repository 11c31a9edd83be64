"""Issue 39, memory, case 4: ``export`` of 1 M span starts that never end (a 231 MB file) took
972 MB, holding every open span whole until the end. Measured in a fresh process, as
``tests/offline/test_dense_inputs.py`` measures every reader (``tests/offline/hostile.py``)."""

from __future__ import annotations

import json

from tests.offline import hostile

MEMORY_LIMIT_MB = 300


def test_export_of_a_million_unfinished_spans_stays_bounded_and_sends_them_all(tmp_path):
    path = hostile.unfinished_spans(tmp_path / "unfinished.jsonl", 1_000_000, 231)
    out = hostile.peak_rss("export otlp-json", path, tmp_path / "work")
    assert out["result"] == "exit 0: ", out
    assert out["max_rss_mb"] <= MEMORY_LIMIT_MB, out


def test_every_unfinished_span_of_a_crowded_file_goes_out_once_and_marked(tmp_path):
    """Past the 10,000 open spans held whole, the rest are read again at the end: each of 12,000
    goes out once, with its own name, marked unfinished, ending when the file was last seen."""
    from otel_agent_trace.offline.export import read_session_spans

    path = hostile.unfinished_spans(tmp_path / "crowded.jsonl", 12_000, 231)
    session = read_session_spans(path)
    last_ts = max(json.loads(line)["ts"] for line in path.read_text().splitlines())
    seen = {}
    for span in session.spans:
        assert span.span_id not in seen
        seen[span.span_id] = span
        assert span.unfinished and span.attributes["agent_trace.unfinished"] is True
        assert span.end_ns == last_ts
        assert span.name.startswith(f"s{int(span.span_id, 16):07d}")
    assert len(seen) == session.unfinished == 12_000
