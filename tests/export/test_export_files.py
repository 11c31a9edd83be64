"""``export --format otlp-json|jaeger-json`` and ``export --otlp`` against local HTTP(S) servers that
refuse, fail or take: what a user runs, what the file or the server gets, what the user reads.
Sending goes through the SDK's OTLP exporter, so its ``OTEL_EXPORTER_OTLP_*`` settings (headers,
gzip, TLS and client certificates, timeout) apply."""

from __future__ import annotations

import ast
import base64
import gzip
import json
import os
import pty
import re
import shutil
import ssl
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
from otel_agent_trace.offline.export import read_session_spans
from otel_agent_trace.offline.export.otlp import build_requests

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
    assert done.stdout.count("wrote 5 spans") == 2 and "2 of 2 sessions written" in done.stdout


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
    """Answers each POST with the next of ``statuses`` (a code, or a code and headers), then 200."""

    def __init__(self, statuses: list, context: ssl.SSLContext | None = None) -> None:
        self.statuses = statuses
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                outer.paths.append(self.path)
                answer = outer.statuses.pop(0) if outer.statuses else 200
                status, headers = answer if isinstance(answer, tuple) else (answer, {})
                payload = b"" if status == 200 else b"unauthorized: bad token \x1b[2J"
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if context is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
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


def _pki(directory: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl."""
    directory.mkdir()

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for name, extra in (("server", ["-extfile", "san.ext"]), ("client", [])):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
            "-out", f"{name}.csr")  # fmt: skip
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-out", f"{name}.pem", *extra)  # fmt: skip
    return directory


@pytest.fixture
def tls_server(tmp_path):
    """An HTTPS OTLP receiver that wants a client certificate signed by its CA."""
    pki = _pki(tmp_path / "pki")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    context.load_verify_locations(pki / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    srv = _Server([], context)
    yield srv, pki
    srv.close()


def test_a_refusing_backend_is_a_clear_error_with_exit_1(recording, server):
    srv = server([401])
    done = cli("export", str(recording), "--otlp", srv.url, "--header", "Authorization=Bearer nope")
    assert done.returncode == 1
    assert "refused" in done.stderr and "401" in done.stderr and "0 spans were sent before" in done.stderr
    assert "\x1b" not in done.stderr, "the server's answer reaches the terminal escaped"
    assert "Traceback" not in done.stderr
    assert len(srv.requests) == 1, "a refusal is not retried"
    assert srv.requests[0][0]["authorization"] == "Bearer nope"


def test_a_failing_backend_is_retried_and_batches_carry_every_span(recording, server):
    srv = server([503, 502])
    done = cli("export", str(recording), "--otlp", srv.url, "--batch-size", "2")
    assert done.returncode == 0, done.stderr
    assert "sent 5 spans" in done.stdout
    assert done.stderr.count("retrying") == 2, "a retry is said, never silent"
    bodies = [ExportTraceServiceRequest.FromString(body) for _, body in srv.requests]
    assert len(bodies) == 2 + 3  # two failures retried, then batches of 2, 2, 1
    sent = [s for b in bodies[2:] for rs in b.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert len(sent) == len({s.span_id for s in sent}) == 5


def test_batches_stay_under_grpc_message_limit_whatever_the_span_count(tmp_path, server):
    """Eight spans of a 1 MiB attribute each: batches of about 3 MiB at most (gRPC's default
    limit is 4 MiB), each span sent once."""
    from tests.offline.hostile import ROOT, entry, jsonl

    big = "word " * (1 << 18)
    entries = [ROOT]
    for n in range(1, 9):
        fields = {"trace_id": "ab" * 16, "span_id": f"{n:016x}"}
        entries.append(entry(2 * n, **fields))
        entries.append(entry(2 * n + 1, "span.end", duration_ns=1, attributes={"big": big}, **fields))
    path = jsonl(tmp_path / "big.jsonl", *entries)
    srv = server([])
    done = cli("export", str(path), "--otlp", srv.url, "--batch-size", "512")
    assert done.returncode == 0, done.stderr
    bodies = [body for _, body in srv.requests]
    assert len(bodies) >= 3 and max(len(b) for b in bodies) < 4 << 20
    spans = [
        s
        for b in bodies
        for rs in ExportTraceServiceRequest.FromString(b).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    assert sorted(int.from_bytes(s.span_id, "big") for s in spans) == list(range(1, 9))


def test_retry_after_is_honoured(recording, server):
    srv = server([(429, {"Retry-After": "0"})])
    done = cli("export", str(recording), "--otlp", srv.url)
    assert done.returncode == 0, done.stderr
    assert len(srv.requests) == 2 and "retrying in 0.00s" in done.stderr


def test_a_closed_port_fails_at_once_with_exit_1(recording, server):
    """No exporter retries against a port nothing listens on: one connection is tried, and its
    refusal is the message (even with a long OTEL_EXPORTER_OTLP_TIMEOUT)."""
    srv = server([])
    url = srv.url
    srv.close()
    done = cli("export", str(recording), "--otlp", url, env={"OTEL_EXPORTER_OTLP_TIMEOUT": "600"})
    assert done.returncode == 1 and "could not be reached" in done.stderr, done.stderr
    host_port = url.removeprefix("http://")
    assert f"cannot reach {host_port}: connection refused" in done.stderr
    assert "retrying" not in done.stderr and "Traceback" not in done.stderr
    grpc = cli("export", str(recording), "--otlp", url, "--protocol", "grpc")
    assert grpc.returncode == 1 and f"cannot reach {host_port}: connection refused" in grpc.stderr


def test_the_exporter_takes_its_settings_from_the_environment(recording, server):
    """No --otlp: OTEL_EXPORTER_OTLP_ENDPOINT; headers and gzip from OTEL_EXPORTER_OTLP_*."""
    srv = server([])
    done = cli(
        "export",
        str(recording),
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": srv.url,
            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20from-env",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        },
    )
    assert done.returncode == 0, done.stderr
    ((headers, body),) = srv.requests
    assert headers["content-encoding"] == "gzip" and headers["authorization"] == "Bearer from-env"
    request = ExportTraceServiceRequest.FromString(gzip.decompress(body))
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert {s.span_id.hex() for s in spans} == {s.span_id for s in load_session(recording).spans}
    assert srv.paths == ["/v1/traces"]


def test_tls_with_a_client_certificate_from_the_environment(recording, tls_server, tmp_path):
    srv, pki = tls_server
    env = {
        "OTEL_EXPORTER_OTLP_CERTIFICATE": str(pki / "ca.pem"),
        "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": str(pki / "client.pem"),
        "OTEL_EXPORTER_OTLP_CLIENT_KEY": str(pki / "client.key"),
    }
    done = cli("export", str(recording), "--otlp", srv.url, env=env)
    assert done.returncode == 0, done.stderr
    assert len(srv.requests) == 1 and "sent 5 spans" in done.stdout
    without = cli("export", str(recording), "--otlp", srv.url, env={k: env[k] for k in list(env)[:1]})
    assert without.returncode == 1 and "Traceback" not in without.stderr, without.stderr
    assert len(srv.requests) == 1, "no client certificate: the server took nothing"


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
    assert proc.returncode == 0 and "5 spans sent" in shown and "\r" in shown
    assert "spans sent" not in cli("export", str(recording), "--otlp", srv.url).stderr  # not on a pipe


# --- layers -------------------------------------------------------------------------------------

FORBIDDEN = (
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
def test_export_imports_no_capture_code_and_the_sdk_only_to_send_or_encode(path):
    forbidden = FORBIDDEN if path.name in ("otlp.py", "send.py") else (*FORBIDDEN, "opentelemetry.sdk")
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            assert not name.startswith(forbidden), f"{path.name} imports {name}"


def test_importing_export_loads_no_sdk():
    """The SDK and the OTLP exporters are loaded when a session is exported, not at import."""
    code = (
        "import sys, otel_agent_trace.cli.export\n"
        "sdk = ('opentelemetry.sdk', 'opentelemetry.exporter')\n"
        "print(sorted(m for m in sys.modules if m.startswith(sdk)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
