"""``export`` of DevDuck session ZIPs and DM-Code-Agent JSONL (issue 35): the spans the loader builds
(what ``analyze`` and ``view`` show) go out with OTLP ids, the same on every export; a session with
no span is never an empty success (exit 2, no file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.export.foreign import otel_id
from tests.offline import samples

from .helpers import cli

HEX = set("0123456789abcdef")


def _spans(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [s for d in lines for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _resource(path: Path) -> dict:
    first = json.loads(path.read_text().splitlines()[0])
    return {a["key"]: a["value"] for a in first["resourceSpans"][0]["resource"]["attributes"]}


@pytest.fixture
def foreign(tmp_path) -> dict[str, Path]:
    return {
        "devduck": samples.write_devduck_zip(tmp_path / "devduck-session.zip"),
        "dm": samples.write_dm(tmp_path / "dm.jsonl"),
        "dm-legacy": samples.write_dm(tmp_path / "dm-legacy.jsonl", legacy=True),
    }


@pytest.mark.parametrize("name", ["devduck", "dm", "dm-legacy"])
def test_otlp_json_has_the_spans_the_loader_builds(foreign, name, tmp_path):
    path = foreign[name]
    session = load_session(path)
    assert session.spans, "the sample has spans"
    out = tmp_path / "out.otlp.jsonl"
    done = cli("export", str(path), "--format", "otlp-json", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {len(session.spans)} spans" in done.stdout
    got = _spans(out)
    assert sorted(s["name"] for s in got) == sorted(r.name for r in session.spans)
    by_entry = {
        next(a["value"]["stringValue"] for a in s["attributes"] if a["key"] == "agent_trace.entry.id"): s
        for s in got
    }
    assert set(by_entry) == {r.entry_id for r in session.spans}
    for record in session.spans:
        span = by_entry[record.entry_id]
        assert len(span["traceId"]) == 32 and set(span["traceId"]) <= HEX
        assert len(span["spanId"]) == 16 and set(span["spanId"]) <= HEX
        assert span["startTimeUnixNano"] == str(record.start_ns)
        assert span["endTimeUnixNano"] == str(record.end_ns)
        if record.parent_span_id:
            parent = next(r for r in session.spans if r.span_id == record.parent_span_id)
            assert span["parentSpanId"] == by_entry[parent.entry_id]["spanId"]
            assert span["traceId"] == by_entry[parent.entry_id]["traceId"]
        else:
            assert "parentSpanId" not in span
    assert _resource(out)["session.id"] == {"stringValue": session.session_id}
    assert _resource(out)["agent_trace.source.format"] == {"stringValue": session.format.NAME}


def test_dm_keeps_its_run_id_as_the_trace_id_and_its_failures(foreign, tmp_path):
    out = tmp_path / "dm.otlp.jsonl"
    assert cli("export", str(foreign["dm"]), "--format", "otlp-json", str(out)).returncode == 0
    spans = {s["name"]: s for s in _spans(out)}
    assert {s["traceId"] for s in spans.values()} == {samples.RUN_ID}
    assert spans["execute_tool run_tests"]["status"]["code"] == 2  # ERROR: DM's failure
    assert spans["execute_tool read_file"]["status"]["code"] == 1
    assert spans["execute_tool run_tests"]["parentSpanId"] == spans["run"]["spanId"]


def test_the_same_file_gets_the_same_ids_every_time(foreign, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        assert cli("export", str(foreign["devduck"]), "--format", "otlp-json", str(out)).returncode == 0
    assert [(s["traceId"], s["spanId"]) for s in _spans(first)] == [
        (s["traceId"], s["spanId"]) for s in _spans(second)
    ]
    assert (
        otel_id("s", "devduck-0002", 16)
        == otel_id("s", "devduck-0002", 16)
        != otel_id("t", "devduck-0002", 16)
    )
    assert otel_id("s", "A1B2C3D4E5F60718", 16) == "a1b2c3d4e5f60718", "an id that is OTLP's is kept"


def test_jaeger_json_of_a_devduck_session(foreign, tmp_path):
    out = tmp_path / "d.jaeger.json"
    assert cli("export", str(foreign["devduck"]), "--format", "jaeger-json", str(out)).returncode == 0
    (trace,) = json.loads(out.read_text())["data"]
    assert [s["operationName"] for s in trace["spans"]] == ["execute_tool shell"]
    tags = {t["key"]: t["value"] for t in trace["spans"][0]["tags"]}
    assert tags["gen_ai.tool.name"] == "shell"


@pytest.mark.parametrize("form", ["otlp-json", "jaeger-json"])
def test_a_session_without_spans_is_exit_2_and_no_file(tmp_path, form):
    entries = [e for e in samples.dm_entries() if e["event"] not in ("run_start", "run_end", "tool_call")]
    dm = tmp_path / "no-spans.jsonl"
    dm.write_text("".join(json.dumps(e) + "\n" for e in entries))
    devduck = samples.write_devduck_zip(
        tmp_path / "no-tools.zip",
        [e for e in samples.devduck_events() if e["event_type"] not in ("tool.call", "tool.result")],
    )
    ours = tmp_path / "session-20261129-084903-abcd0000.jsonl"
    ours.write_text(
        json.dumps(
            {
                "id": "abcd0000-0000",
                "parent_id": "",
                "type": "session.start",
                "layer": "agent",
                "ts": 1_795_942_143_798_726_429,
                "session_id": "session-20261129-084903-abcd0000",
                "tier": "trace",
                "metadata": {"format": "otel-agent-trace/session", "format_version": "1.1"},
            }
        )
        + "\n"
    )
    for path in (dm, devduck, ours):
        out = tmp_path / f"{path.stem}.out"
        done = cli("export", str(path), "--format", form, str(out))
        assert done.returncode == 2, (path, done.stdout, done.stderr)
        assert "no spans in this session" in done.stderr and "nothing to export" in done.stderr
        assert not out.exists(), "no empty file left behind"
        assert "wrote" not in done.stdout
    stdout = cli("export", str(dm), "--format", form, "-")
    assert stdout.returncode == 2 and stdout.stdout == ""
