"""``export --format otlp-json|jaeger-json`` and ``export --otlp`` against local HTTP servers that
refuse, fail or take: what a user runs, what the file or the server gets, what the user reads."""

from __future__ import annotations

import ast
import base64
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.export import build_requests, read_session_spans

from .agents.recorded_agent import TOKEN
from .helpers import CLI, cli, record

HEX32, HEX16 = re.compile(r"[0-9a-f]{32}"), re.compile(r"[0-9a-f]{16}")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return record(tmp_path_factory.mktemp("rec"))


def _spans_of(lines: list[dict]) -> list[dict]:
    return [s for d in lines for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _otlp_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_otlp_json_has_every_span_of_the_session_and_its_children_with_their_ids(recording, tmp_path):
    out = tmp_path / "s.otlp.jsonl"
    done = cli("export", str(recording), "--format", "otlp-json", str(out))
    assert done.returncode == 0, done.stderr
    assert "wrote 5 spans" in done.stdout
    zipped = load_session(recording.with_suffix(fmt.ZIP_SUFFIX))  # the ZIP holds parent and child files
    local = {s.span_id: s for s in zipped.spans}
    got = {s["spanId"]: s for s in _spans_of(_otlp_lines(out))}
    assert set(got) == set(local) and any(s.name == "execute_tool child work" for s in local.values())
    for span_id, span in local.items():
        s = got[span_id]
        assert (
            s["traceId"] == span.trace_id and HEX32.fullmatch(s["traceId"]) and HEX16.fullmatch(s["spanId"])
        )
        assert s.get("parentSpanId") == span.parent_span_id
        assert s["name"] == span.name
        assert s["startTimeUnixNano"] == str(span.start_ns) and s["endTimeUnixNano"] == str(span.end_ns)
        assert isinstance(s["kind"], int)
        attrs = {a["key"]: a["value"] for a in s["attributes"]}
        assert attrs["session.id"] == {"stringValue": zipped.session_id}
        assert [e["name"] for e in s.get("events", [])] == [e["name"] for e in span.events]
    failing = next(s for s in got.values() if s["name"] == "execute_tool failing")
    assert failing["status"] == {"message": "ValueError: step 3 failed", "code": 2}
    assert failing["events"][0]["timeUnixNano"].isdigit()


def test_otlp_json_is_the_otlp_json_mapping_of_the_protobuf_we_send(recording, tmp_path):
    """Hex ids back to bytes: each line parses as an ``ExportTraceServiceRequest`` equal to the one
    sent over OTLP (so a reader of the OTLP/JSON mapping gets exactly what a backend would)."""
    out = tmp_path / "s.otlp.jsonl"
    assert cli("export", str(recording), "--format", "otlp-json", str(out)).returncode == 0
    sent = [r for r, _ in build_requests(read_session_spans(recording))]

    def to_proto_json(node):
        if isinstance(node, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in ("traceId", "spanId", "parentSpanId")
                else to_proto_json(v)
                for k, v in node.items()
            }
        return [to_proto_json(v) for v in node] if isinstance(node, list) else node

    parsed = [ParseDict(to_proto_json(line), ExportTraceServiceRequest()) for line in _otlp_lines(out)]
    assert parsed == sent


def test_the_export_is_redacted_even_from_the_private_tier(recording, tmp_path):
    private = recording.with_name(
        recording.name.replace(fmt.JSONL_SUFFIX, fmt.CHECKPOINT_SUFFIX + fmt.JSONL_SUFFIX)
    )
    assert TOKEN in private.read_text(), "the checkpoint tier keeps the secret"
    for form, name in (("otlp-json", "p.otlp.jsonl"), ("jaeger-json", "p.jaeger.json")):
        out = tmp_path / name
        assert cli("export", str(private), "--format", form, str(out)).returncode == 0
        text = out.read_text()
        assert TOKEN not in text and "<redacted:github_token>" in text


def test_jaeger_json_has_each_trace_with_references_and_logs(recording, tmp_path):
    out = tmp_path / "s.jaeger.json"
    zipped = recording.with_suffix(fmt.ZIP_SUFFIX)
    assert cli("export", str(zipped), "--format", "jaeger-json", str(out)).returncode == 0
    traces = json.loads(out.read_text())["data"]
    assert {t["traceID"] for t in traces} == {s.trace_id for s in load_session(zipped).spans}
    spans = {s["spanID"]: s for t in traces for s in t["spans"]}
    assert len(spans) == 5
    for trace in traces:
        assert trace["processes"]["p1"]["serviceName"] == "otel-agent-trace"
        ids = {s["spanID"] for s in trace["spans"]}
        for span in trace["spans"]:
            assert span["traceID"] == trace["traceID"]
            for ref in span["references"]:
                assert ref["refType"] == "CHILD_OF" and ref["spanID"] in ids
    failing = next(s for s in spans.values() if s["operationName"] == "execute_tool failing")
    assert {"key": "error", "type": "bool", "value": True} in failing["tags"]
    assert failing["logs"][0]["fields"][0] == {"key": "event", "type": "string", "value": "exception"}


def test_a_crash_cut_session_is_exported_with_its_unfinished_span_marked(tmp_path):
    path = record(tmp_path / "rec", mode="crash")
    assert fmt.SESSION_END not in path.read_text()
    out = tmp_path / "c.otlp.jsonl"
    assert cli("export", str(path), "--format", "otlp-json", str(out)).returncode == 0
    spans = {s["name"]: s for s in _spans_of(_otlp_lines(out))}
    agent = spans["invoke_agent exporter-demo"]
    attrs = {a["key"]: a["value"] for a in agent["attributes"]}
    assert attrs["agent_trace.unfinished"] == {"boolValue": True}
    last_ts = max(json.loads(line)["ts"] for line in path.read_text().splitlines())
    assert agent["endTimeUnixNano"] == str(last_ts)
    assert "execute_tool child work" in spans and "agent_trace.unfinished" not in str(
        spans["execute_tool spawn"]
    )


def test_export_dir_writes_one_file_per_session(tmp_path):
    first, second = record(tmp_path / "d"), record(tmp_path / "d")
    out = tmp_path / "out"
    done = cli("export-dir", str(tmp_path / "d"), "--format", "otlp-json", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name.replace(fmt.JSONL_SUFFIX, ".otlp.jsonl") for p in (first, second)
    )
    assert done.stdout.count("wrote 5 spans") == 2 and ".zip" in done.stdout


def test_bad_input_is_named_by_file_and_line_and_exits_2(recording, tmp_path):
    lines = recording.read_text().splitlines(keepends=True)
    bad = tmp_path / recording.name
    bad.write_text(lines[0] + "not json\n" + "".join(lines[1:]))
    done = cli("export", str(bad), "--format", "otlp-json", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and f"{bad}:2: not JSON" in done.stderr
    assert not (tmp_path / "x.jsonl").exists(), "no half-written output"
    assert cli("export", str(tmp_path / "missing.jsonl"), "--otlp", "http://127.0.0.1:9").returncode == 2
    assert cli("export", str(recording), "--format", "csv", "x").returncode == 2


def test_a_torn_last_line_is_tolerated(recording, tmp_path):
    for child in recording.parent.glob(recording.name.replace(fmt.JSONL_SUFFIX, ".p*")):
        shutil.copy(child, tmp_path / child.name)  # the child file goes with it
    torn = tmp_path / recording.name
    torn.write_text(recording.read_text() + '{"id": "torn')
    out = tmp_path / "t.otlp.jsonl"
    assert cli("export", str(torn), "--format", "otlp-json", str(out)).returncode == 0
    assert len(_spans_of(_otlp_lines(out))) == 5


def test_an_existing_output_file_is_never_overwritten(recording, tmp_path):
    out = tmp_path / "keep.jsonl"
    out.write_text("mine\n")
    done = cli("export", str(recording), "--format", "otlp-json", str(out))
    assert done.returncode == 2 and "already exists" in done.stderr
    assert out.read_text() == "mine\n"


# --- a local OTLP/HTTP server that answers as told ------------------------------------------------


class _Server:
    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.requests: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append((dict(self.headers), body))
                status = outer.statuses.pop(0) if outer.statuses else 200
                payload = b"" if status == 200 else b"unauthorized: bad token \x1b[2J"
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    made: list[_Server] = []

    def make(statuses: list[int]) -> _Server:
        made.append(_Server(statuses))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_a_refusing_backend_is_a_clear_error_with_exit_1(recording, server):
    srv = server([401])
    done = cli("export", str(recording), "--otlp", srv.url, "--header", "Authorization=Bearer nope")
    assert done.returncode == 1
    assert "refused" in done.stderr and "HTTP 401" in done.stderr and "0 of 5 spans were sent" in done.stderr
    assert "\x1b" not in done.stderr, "the server's answer reaches the terminal escaped"
    assert len(srv.requests) == 1, "a refusal is not retried"
    assert srv.requests[0][0]["Authorization"] == "Bearer nope"


def test_a_failing_backend_is_retried_and_batches_carry_every_span(recording, server):
    srv = server([503, 502])
    done = cli("export", str(recording), "--otlp", srv.url, "--batch-size", "2")
    assert done.returncode == 0, done.stderr
    assert "sent 5 spans" in done.stdout
    bodies = [ExportTraceServiceRequest.FromString(body) for _, body in srv.requests]
    assert len(bodies) == 2 + 3  # two failures retried, then batches of 2, 2, 1
    sent = [s for b in bodies[1:] for rs in b.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert len({s.span_id for s in sent}) == 5


def test_an_unreachable_backend_exits_1_after_the_retries(recording, server):
    srv = server([])
    url = srv.url
    srv.close()
    done = cli("export", str(recording), "--otlp", url, "--retries", "1")
    assert (
        done.returncode == 1 and "could not be reached" in done.stderr and "connection refused" in done.stderr
    )


def test_a_progress_bar_on_a_terminal_only(recording, server):
    srv = server([])
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*CLI, "export", str(recording), "--otlp", srv.url], stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    shown = b"".join(chunks).decode()
    assert proc.returncode == 0 and "5/5 spans" in shown and "\r" in shown
    assert "5/5" not in cli("export", str(recording), "--otlp", srv.url).stderr  # not on a pipe


# --- layers -------------------------------------------------------------------------------------

FORBIDDEN = (
    "opentelemetry.sdk",
    "otel_agent_trace.instrumentation",
    "otel_agent_trace.recording",
    "otel_agent_trace.api",
    "otel_agent_trace._internal",
)


@pytest.mark.parametrize(
    "path",
    [
        *sorted((REPO / "otel_agent_trace" / "offline" / "export").glob("*.py")),
        REPO / "otel_agent_trace" / "cli" / "export.py",
    ],
    ids=lambda p: p.name,
)
def test_export_imports_no_capture_code_and_no_sdk(path):
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_running_export_loads_no_sdk():
    code = (
        "import sys, otel_agent_trace.cli.export\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
