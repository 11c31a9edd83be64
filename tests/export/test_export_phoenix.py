"""``otel-agent-trace export`` into a real OTLP receiver (Arize Phoenix), over HTTP and gRPC: the
spans read back through its API are the session file's (names, parents, attributes, events,
times); a crash-cut session arrives with its unfinished span marked; a second export of the same
file leaves one copy of each span (same ids)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from tests.offline import samples

from .helpers import cli, record

PROTOCOLS = ["http/protobuf", "grpc"]


def _attr(span: dict, key: str):
    """An attribute of a Phoenix span (flat ``a.b`` keys or nested ``{"a": {"b": …}}``)."""
    attrs = span.get("attributes") or {}
    if key in attrs:
        return attrs[key]
    node = attrs
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _us(iso: str) -> int:
    """Phoenix's ISO time as microseconds since the epoch."""
    moment = datetime.fromisoformat(iso)
    return int(moment.timestamp()) * 1_000_000 + moment.microsecond


def _same_time(iso: str, ns: int) -> bool:
    """Phoenix keeps microseconds (rounded): the same instant as ``ns`` to within one."""
    return abs(_us(iso) - ns / 1000) <= 1


def _endpoint(phoenix, protocol: str) -> str:
    return phoenix.grpc_endpoint if protocol == "grpc" else phoenix.http_endpoint


def _received(phoenix, session) -> dict[str, dict]:
    by_trace: dict[str, int] = {}
    for span in session.spans:
        by_trace[span.trace_id] = by_trace.get(span.trace_id, 0) + 1
    got = {}
    for trace_id, count in by_trace.items():
        for span in phoenix.spans(trace_id, expect=count):
            got[span["context"]["span_id"]] = span
    return got


@pytest.mark.phoenix
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("form", ["jsonl", "zip"])
def test_an_exported_session_reads_back_as_the_session_file(tmp_path, phoenix, protocol, form):
    path = record(tmp_path)
    if form == "zip":
        path = path.with_suffix(fmt.ZIP_SUFFIX)
    done = cli("export", str(path), "--otlp", _endpoint(phoenix, protocol), "--protocol", protocol)
    assert done.returncode == 0, done.stderr
    session = load_session(path.with_suffix(fmt.ZIP_SUFFIX))  # parent and child files
    local = {s.span_id: s for s in session.spans}
    assert len(local) == 5 and f"sent {len(local)} spans" in done.stdout

    got = _received(phoenix, session)
    assert set(got) == set(local), "the backend has exactly the spans of the session and its child"
    for span_id, span in local.items():
        remote = got[span_id]
        assert remote["context"]["trace_id"] == span.trace_id
        assert remote["parent_id"] == span.parent_span_id
        assert remote["name"] == span.name
        assert _same_time(remote["start_time"], span.start_ns)
        assert _same_time(remote["end_time"], span.end_ns)
        for key, value in span.attributes.items():
            if isinstance(value, (str, bool, int, float)):
                assert _attr(remote, key) == value, f"{span.name}: {key}"
        assert [e["name"] for e in remote["events"]] == [e["name"] for e in span.events]
        for sent, local_event in zip(remote["events"], span.events, strict=True):
            for key, value in (local_event.get("attributes") or {}).items():
                if isinstance(value, str) and len(value) < 200:
                    assert _attr(sent, key) == value
        assert remote["status_code"] == ("ERROR" if span.status == "ERROR" else "UNSET")
    assert (
        _attr(got[next(k for k, s in local.items() if s.name == "execute_tool failing")], "exception") is None
    )


@pytest.mark.phoenix
def test_a_crash_cut_session_arrives_with_its_unfinished_span_marked(tmp_path, phoenix):
    path = record(tmp_path, mode="crash")
    done = cli("export", str(path), "--otlp", phoenix.http_endpoint)
    assert done.returncode == 0, done.stderr
    assert "1 unfinished" in done.stdout
    session = load_session(path)
    (unfinished,) = [s for s in session.spans if not s.finished]
    got = _received(phoenix, session)
    remote = got[unfinished.span_id]
    assert _attr(remote, "agent_trace.unfinished") is True
    last_seen = max(e.timestamp_ns for e in session.events if e.type != fmt.SESSION_JOIN)
    assert _same_time(remote["end_time"], last_seen), "an unfinished span ends when its process was last seen"
    assert all(_attr(got[s.span_id], "agent_trace.unfinished") is None for s in session.spans if s.finished)


@pytest.mark.phoenix
def test_exporting_the_same_file_twice_keeps_one_copy_of_each_span(tmp_path, phoenix):
    path = record(tmp_path / "a")
    for protocol in PROTOCOLS:
        done = cli("export", str(path), "--otlp", _endpoint(phoenix, protocol), "--protocol", protocol)
        assert done.returncode == 0, done.stderr
    # A later export, sent after both: once it is in, the two before it have been ingested too.
    marker = record(tmp_path / "b")
    assert cli("export", str(marker), "--otlp", phoenix.http_endpoint).returncode == 0
    _received(phoenix, load_session(marker.with_suffix(fmt.ZIP_SUFFIX)))
    session = load_session(path.with_suffix(fmt.ZIP_SUFFIX))
    for trace_id in {s.trace_id for s in session.spans}:
        spans = phoenix.spans(trace_id)
        ids = [s["context"]["span_id"] for s in spans]
        assert len(ids) == len(set(ids)) == sum(s.trace_id == trace_id for s in session.spans)


@pytest.mark.phoenix
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_dm_session_arrives_as_its_file_export_says_configured_from_the_environment(
    tmp_path, phoenix, protocol
):
    """A DM-Code-Agent session (issue 35), sent with no --otlp: OTEL_EXPORTER_OTLP_ENDPOINT and
    _PROTOCOL say where. Phoenix has the spans the loader builds, with the ids its
    ``--format otlp-json`` export of the same file has."""
    run_id = uuid.uuid4().hex
    path = tmp_path / "dm.jsonl"
    path.write_text("".join(json.dumps({**e, "run_id": run_id}) + "\n" for e in samples.dm_entries()))
    done = cli("export", str(path), env=phoenix.otlp_env(protocol))
    assert done.returncode == 0, done.stderr
    assert f"({protocol})" in done.stdout
    out = tmp_path / "dm.otlp.jsonl"
    assert cli("export", str(path), "--format", "otlp-json", str(out)).returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    written = {
        s["spanId"]: s
        for d in lines
        for rs in d["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    }
    assert {s["traceId"] for s in written.values()} == {run_id}
    got = {s["context"]["span_id"]: s for s in phoenix.spans(run_id, expect=len(written))}
    assert set(got) == set(written)
    for span_id, span in written.items():
        assert got[span_id]["name"] == span["name"]
        assert got[span_id]["parent_id"] == span.get("parentSpanId")
        assert _same_time(got[span_id]["start_time"], int(span["startTimeUnixNano"]))
    assert {s["name"] for s in got.values()} == {r.name for r in load_session(path).spans}
