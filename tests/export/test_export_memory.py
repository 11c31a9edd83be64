"""Issue 39, memory, case 4: ``export`` of 1 M span starts that never end (a 231 MB file) took
972 MB, holding every open span whole until the end. Measured in a fresh process, as
``tests/offline/test_dense_inputs.py`` measures every reader (``tests/offline/hostile.py``)."""

from __future__ import annotations

import json
import mmap
import re
import subprocess
import sys

from tests.offline import hostile

MEMORY_LIMIT_MB = 300
JAEGER_LIMIT_MB = 150  # 300,000 spans: 391 MB when built whole, 77 MB streamed


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


# ``hostile.PROBE`` runs this in a fresh process and reads its peak RSS: the CLI writing Jaeger JSON.
_JAEGER = """
import json, os, sys
path, out = sys.argv[1:3]
with open(os.devnull, "w") as null:
    sys.stdout, sys.stderr = null, null
    from otel_agent_trace.cli.main import main
    try:
        code = main(["export", "--format", "jaeger-json", out, path])
    except SystemExit as exc:
        code = exc.code
sys.stdout = sys.__stdout__
print(json.dumps({"code": code}))
"""


def test_jaeger_json_of_many_spans_is_streamed_in_bounded_memory(tmp_path):
    """Jaeger's JSON is one document: it was built whole in memory (every span a dict) before a
    byte was written (391 MB for these 300,000 spans). They now go through a spool file, 8 bytes
    of memory each."""
    count = 300_000
    path = hostile.unfinished_spans(tmp_path / "many.jsonl", count, 231)
    out = tmp_path / "many.jaeger.json"
    done = subprocess.run(
        [sys.executable, "-c", hostile.PROBE, _JAEGER, str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout)
    assert measured["code"] == 0, measured
    assert measured["max_rss_mb"] <= JAEGER_LIMIT_MB, measured
    with open(out, "rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as text:
        # read in place: loading it whole here would take 600 MB
        assert text[:21] == b'{"data":[{"traceID":"' and text[-19:] == b'"warnings":null}]}\n'
        assert sum(1 for _ in re.finditer(rb'"spans":\[', text)) == 1
        assert sum(1 for _ in re.finditer(rb'"operationName":', text)) == count
