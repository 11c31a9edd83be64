"""Every HTTP client's requests are CLIENT child spans of the tool that sent them (one span per
request, whatever stack of clients carries it); raw socket connects are events; the recorder's
own exports and anything outside a session are not recorded."""

from __future__ import annotations

import asyncio
import contextvars
import http.client
import socket
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import aiohttp
import httpx
import httpx2
import orjson
import pytest
import requests
import urllib3
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent_trace as oat
from otel_agent_trace._internal.guard import own_io
from otel_agent_trace.settings import Settings
from tests.services.phoenix import phoenix as phoenix  # the real OTLP receiver, as a fixture

from .conftest import entries, events_under, spans_under, tool_start

STATUS = "http.response.status_code"


def _http_spans(memory_exporter, tool: str) -> list:
    """The tool's child spans; fails if any HTTP span (at any depth) is not a direct child."""
    spans = memory_exporter.get_finished_spans()
    parent = next(s for s in spans if s.name == f"execute_tool {tool}")
    children = [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]
    http_spans = [s for s in spans if "http.request.method" in (s.attributes or {})]
    assert all(s in children for s in http_spans), [(s.name, s.attributes) for s in http_spans]
    return children


def _get_requests(url: str) -> int:
    return requests.get(url, timeout=10).status_code


def _get_httpx(url: str) -> int:
    return httpx.get(url).status_code


def _get_httpx2(url: str) -> int:
    return httpx2.get(url).status_code


def _get_urllib(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as response:
        response.read()
        return response.status


def _get_http_client(url: str) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _get_urllib3(url: str) -> int:
    with urllib3.PoolManager() as pool:
        return pool.request("GET", url).status


def _get_httpx_async(url: str) -> int:
    async def go() -> int:
        async with httpx.AsyncClient() as client:
            return (await client.get(url)).status_code

    return asyncio.run(go())


def _get_httpx2_async(url: str) -> int:
    async def go() -> int:
        async with httpx2.AsyncClient() as client:
            return (await client.get(url)).status_code

    return asyncio.run(go())


def _get_aiohttp(url: str) -> int:
    async def go() -> int:
        async with aiohttp.ClientSession() as client, client.get(url) as response:
            await response.read()
            return response.status

    return asyncio.run(go())


CLIENTS = {
    "requests": _get_requests,
    "httpx": _get_httpx,
    "httpx-async": _get_httpx_async,
    "httpx2": _get_httpx2,
    "httpx2-async": _get_httpx2_async,
    "urllib.request": _get_urllib,
    "http.client": _get_http_client,
    "urllib3": _get_urllib3,
    "aiohttp": _get_aiohttp,
}


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_makes_one_client_span_under_the_tool(client, session, memory_exporter, http_server):
    url = f"{http_server}/items?page=2"
    with oat.tool("fetch"):
        assert CLIENTS[client](url) == 200
    (span,) = _http_spans(memory_exporter, "fetch")  # exactly one: stacked clients add nothing
    assert span.kind is SpanKind.CLIENT
    assert span.name == "GET"
    port = urlsplit(http_server).port
    session_keys = {"session.id": None, "agent_trace.session.id": None}  # the session's tag(s)
    assert dict(span.attributes) | session_keys == {
        "http.request.method": "GET",
        "url.full": url,
        "server.address": "127.0.0.1",
        "server.port": port,
        "http.response.status_code": 200,
        **session_keys,
    }
    assert span.end_time > span.start_time
    all_entries = entries(session)
    (end,) = spans_under(all_entries, tool_start(all_entries, "fetch"))
    assert end["layer"] == "sys" and end["attributes"]["url.full"] == url
    # the connect inside the client is the client's business: no separate network event
    assert not events_under(all_entries, tool_start(all_entries, "fetch"), "network.connect")


def test_post_status_errors_and_redirects(session, memory_exporter, http_server):
    with oat.tool("many"):
        assert requests.post(f"{http_server}/submit", data=b"payload", timeout=10).text == "echo:payload"
        assert httpx.put(f"{http_server}/put", content=b"x").status_code == 200
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{http_server}/missing", timeout=10)
        assert info.value.code == 404
        assert requests.get(f"{http_server}/redirect", timeout=10).url == f"{http_server}/landed"
    spans = _http_spans(memory_exporter, "many")
    summary = [(s.attributes["http.request.method"], s.attributes.get(STATUS)) for s in spans]
    assert summary == [("POST", 200), ("PUT", 200), ("GET", 404), ("GET", 200)]
    failed = spans[2]
    assert failed.status.status_code is StatusCode.ERROR and failed.attributes["error.type"] == "404"
    assert spans[3].attributes["url.full"] == f"{http_server}/redirect"  # one span for the whole exchange


def test_a_connection_failure_is_an_error_span_and_the_error_is_unchanged(session, memory_exporter):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with oat.tool("refused"), pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{closed_port}/", timeout=10)
    (span,) = _http_spans(memory_exporter, "refused")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ConnectionError"
    assert "http.response.status_code" not in span.attributes


def _both_tier_session(tmp_path) -> oat.Session:
    directory = tmp_path / "both"
    return oat.session(
        "urls", directory=directory, settings=Settings(directory=directory, tiers=("trace", "checkpoint"))
    )


def test_the_url_is_captured_whole_and_redacted_by_the_trace_tier_only(
    system_layer, provider, memory_exporter, http_server, tmp_path
):
    port = urlsplit(http_server).port
    url = f"http://alice:hunter2@127.0.0.1:{port}/q?api_key=abcdef123456&page=1"
    with _both_tier_session(tmp_path) as s:
        with oat.tool("secrets"):
            requests.get(url, timeout=10)
        files = list(s.files)
    (span,) = _http_spans(memory_exporter, "secrets")
    assert span.attributes["url.full"] == url  # capture keeps it as it is: the tiers decide
    trace_file, checkpoint_file = sorted(files, key=lambda p: p.name.endswith(".checkpoint.jsonl"))
    assert checkpoint_file.name.endswith(".checkpoint.jsonl")

    def urls(path):
        return [e["attributes"]["url.full"] for e in map(orjson.loads, path.read_bytes().splitlines())
                if "url.full" in (e.get("attributes") or {})]  # fmt: skip

    (shared,) = urls(trace_file)
    assert "hunter2" not in shared and "alice" not in shared and "abcdef123456" not in shared
    assert shared.endswith("&page=1") and f"127.0.0.1:{port}/q?api_key=" in shared
    assert urls(checkpoint_file) == [url]  # the checkpoint tier is complete: re-execution needs it


AGENT = """
import os, urllib.request
from opentelemetry import trace

with trace.get_tracer("agent").start_as_current_span("fetching") as span:
    urllib.request.urlopen(os.environ["FETCH_URL"], timeout=10).read()
print(format(span.get_span_context().trace_id, "032x"))
"""


@pytest.mark.phoenix
def test_the_otlp_stream_gets_the_url_redacted(tmp_path, phoenix, http_server):
    from tests.e2e.helpers import run_instrumented

    port = urlsplit(http_server).port
    url = f"http://127.0.0.1:{port}/q?api_key=abcdef123456&page=1"  # (urllib takes no user-info)
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = {**phoenix.otlp_env("http/protobuf"), "FETCH_URL": url, "AGENT_TRACE_TIER": "both"}
    env["AGENT_TRACE_DIR"] = str(tmp_path / "sessions")
    done = run_instrumented(script, tmp_path, env)
    assert done.returncode == 0, done.stderr
    spans = phoenix.spans(done.stdout.strip().splitlines()[-1], expect=2)
    (get,) = [s for s in spans if s["name"] == "GET"]
    received = (
        get["attributes"]["url"]["full"] if "url" in get["attributes"] else get["attributes"]["url.full"]
    )
    assert "hunter2" not in received and "abcdef123456" not in received and received.endswith("&page=1")
    checkpoint = next((tmp_path / "sessions").glob("*.checkpoint.jsonl")).read_text()
    assert url in checkpoint


def test_a_request_from_a_thread_of_the_tool_belongs_to_the_tool(session, memory_exporter, http_server):
    with oat.tool("threaded_fetch"):
        ctx = contextvars.copy_context()
        t = threading.Thread(target=ctx.run, args=(_get_requests, f"{http_server}/t"))
        t.start()
        t.join()
    (span,) = _http_spans(memory_exporter, "threaded_fetch")
    assert span.attributes["url.full"] == f"{http_server}/t"


def test_a_raw_socket_connect_is_an_event(session, http_server):
    port = urlsplit(http_server).port
    with oat.tool("raw_socket"), socket.create_connection(("127.0.0.1", port), timeout=10):
        pass
    all_entries = entries(session)
    (event,) = events_under(all_entries, tool_start(all_entries, "raw_socket"), "network.connect")
    assert event["attributes"] == {
        "network.transport": "tcp",
        "network.peer.address": "127.0.0.1",
        "network.peer.port": port,
    }


def test_the_recorders_own_requests_and_suppressed_exports_are_not_recorded(
    session, memory_exporter, http_server
):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from otel_agent_trace.recording.forwarding import ShareableSpanExporter

    with oat.tool("quiet_net"):
        with own_io():
            requests.get(f"{http_server}/own", timeout=10)
        with suppress_instrumentation():  # what the SDK's batch processor does around exports
            httpx.get(f"{http_server}/suppressed")
        with oat.agent("finished"):
            pass
        finished = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent finished"]
        exporter = ShareableSpanExporter(OTLPSpanExporter(endpoint=f"{http_server}/v1/traces"))
        exporter.export(finished)
        requests.get(f"{http_server}/theirs", timeout=10)
    urls = [s.attributes.get("url.full") for s in _http_spans(memory_exporter, "quiet_net")]
    assert urls == [None, f"{http_server}/theirs"]  # the agent span, then the agent's own request


def test_nothing_is_recorded_outside_a_session(system_layer, memory_exporter, http_server):
    with oat.tool("offline"):
        requests.get(f"{http_server}/x", timeout=10)
        urllib.request.urlopen(f"{http_server}/y", timeout=10).close()
    assert [s.name for s in memory_exporter.get_finished_spans()] == ["execute_tool offline"]


def test_an_odd_call_reaches_the_client_and_fails_exactly_as_it_would(session, memory_exporter):
    with oat.tool("odd"):
        with pytest.raises(AttributeError) as info:
            requests.Session().send("not a request")  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            httpx.Client().send(None)  # type: ignore[arg-type]
    assert "has no attribute" in str(info.value)
    assert _http_spans(memory_exporter, "odd") == []
