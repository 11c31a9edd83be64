"""Record a real agent once (checkpoint tier, fake model server), stop the server, and run the
agent again with ``otel-agent-trace replay --model-replay``: the same run, with no network."""

from __future__ import annotations

import ipaddress
import json
import socket

import pytest

from tests.fakes.llm_server import FakeLLMServer

from .conftest import API_KEY, EXAMPLES, SCRIPTS, Recorded, agent_output, entries, record, replay

AGENTS = {
    "openai": EXAMPLES / "openai_weather.py",
    "openai-responses": EXAMPLES / "openai_weather.py",  # with --responses
    "langchain": EXAMPLES / "langchain_weather.py",
    "agents-sdk": EXAMPLES / "agents_sdk_weather.py",
    "anthropic": EXAMPLES / "anthropic_weather.py",
    "strands": EXAMPLES / "strands_weather.py",
}
# (agent, streamed)
RUNS = [
    ("openai", False),
    ("openai", True),
    ("openai-responses", False),
    ("openai-responses", True),
    ("anthropic", False),
    ("anthropic", True),
    ("langchain", False),
    ("langchain", True),
    ("agents-sdk", False),
    ("agents-sdk", True),
    ("strands", True),  # its OpenAI provider always streams
]
TOOL_ID = {"anthropic": "toolu_01Weather", "responses": "call_weather_r1"}
# where the system prompt and the tool's output are in a request's body
SYSTEM = {"anthropic": "body.system", "responses": "body.instructions"}
TOOL_OUTPUT = {"anthropic": "body.messages[2].content[0].content", "responses": "body.input[2].output"}


def provider(recorded: Recorded) -> str:
    return recorded.provider


def system_prompt(body: dict) -> str:
    for key in ("system", "instructions"):
        if key in body:
            return body[key]
    return body["messages"][0]["content"]


@pytest.fixture(scope="module", params=RUNS, ids=lambda p: f"{p[0]}-{'stream' if p[1] else 'plain'}")
def recorded(request, tmp_path_factory) -> Recorded:
    agent, stream = request.param
    cwd = tmp_path_factory.mktemp(f"{agent}-{'stream' if stream else 'plain'}")
    kind = {"anthropic": "anthropic", "openai-responses": "responses"}.get(agent, "openai")
    args = (["--responses"] if kind == "responses" else []) + (["--stream"] if stream else [])
    return record(AGENTS[agent], cwd, *args, stream=stream, provider=kind)


def test_the_replay_reproduces_the_run_with_the_server_stopped(recorded):
    done, report = replay(recorded)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    out = json.loads(recorded.output)
    call_id = TOOL_ID.get(provider(recorded), "call_weather_1")
    assert out["tool_calls"] == [{"id": call_id, "name": "get_weather", "arguments": {"city": "Paris"}}]
    assert out["answer"] == "It is 18°C and sunny in Paris."
    assert report["divergences"] == [] and report["refused"] == []
    assert [c["status"] for c in report["calls"]] == ["replayed", "replayed"]
    assert report["answered"] == report["recorded_exchanges"] == 2 and report["unused"] == 0
    assert "no divergence" in done.stdout
    # the replayed run is a session of its own, holding the same exchanges: replayable in turn
    line = next(x for x in done.stdout.splitlines() if x.startswith("the replayed run: "))
    new = recorded.cwd / line.removeprefix("the replayed run: ")
    assert new != recorded.session
    # linked to the source: its metadata names the session it was answered from
    source_id = entries(recorded.session)[0]["session_id"]
    assert entries(new)[0]["metadata"]["replay_of"] == source_id
    assert [x["response"]["chunks"] for x in _exchanges(new)] == [
        x["response"]["chunks"] for x in _exchanges(recorded.session)
    ]


def _exchanges(session) -> list[dict]:
    return [
        x for e in entries(session) if e["type"] == "span.end"
        for x in (e.get("content") or {}).get("http_exchanges", [])
    ]  # fmt: skip


def test_the_session_zip_answers_the_same(recorded):
    archive = recorded.session.with_name(recorded.session.name.replace(".jsonl", ".zip"))
    done, report = replay(recorded, session=archive)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output and report["answered"] == 2


def test_the_recording_keeps_each_exchange_without_credentials(recorded):
    text = recorded.session.read_text()
    assert API_KEY not in text
    exchanges = [
        x for e in entries(recorded.session) if e["type"] == "span.end"
        for x in (e.get("content") or {}).get("http_exchanges", [])
    ]  # fmt: skip
    assert len(exchanges) == 2
    for x in exchanges:
        names = {name.lower() for name, _ in x["request"]["headers"]}
        assert "authorization" not in names and "content-type" in names
        assert x["response"]["status"] == 200 and x["response"]["complete"] is True
        assert not x["response"]["truncated"]
        body = "".join(x["response"]["chunks"])
        assert len(body.encode()) == x["response"]["bytes"]
        assert json.loads(x["request"]["body"])["model"] in ("gpt-4o-mini", "claude-sonnet-4-5")
    streamed = "--stream" in recorded.args
    assert all(json.loads(x["request"]["body"]).get("stream", False) is streamed for x in exchanges)
    if streamed:
        assert "".join(exchanges[0]["response"]["chunks"]).startswith(("data: ", "event: "))


def test_a_changed_prompt_is_reported_at_the_first_call_with_the_diff(recorded):
    changed = ("--prompt", "You answer weather questions in French. Use the tools.", *recorded.args)
    done, report = replay(recorded, agent_args=changed)
    assert done.returncode != 0
    (first,) = report["divergences"]
    assert first["call"] == 1 and first["recorded_index"] == 1
    holder = next(
        e for e in entries(recorded.session)
        if e["type"] == "span.end" and (e.get("content") or {}).get("http_exchanges")
    )  # fmt: skip
    assert first["entry_id"] == holder["id"]
    where = SYSTEM.get(provider(recorded), "body.messages[0].content")
    assert any(
        d.startswith(where) and "in French" in d and "You answer weather questions. Use the tools." in d
        for d in first["differences"]
    ), first["differences"]
    assert report["stopped"] is True and report["answered"] == 0
    assert "first divergence at call 1" in done.stdout
    assert "ModelReplayDivergence" in done.stderr


def test_a_changed_tool_output_is_reported_at_the_next_model_call(recorded):
    """With ``--tools live`` (your real tools: your own recording), a changed tool shows."""
    weather = recorded.cwd / "weather.json"
    original = weather.read_text()
    weather.write_text(json.dumps({"Paris": {"temp_c": 25, "sky": "sunny"}}))
    try:
        done, report = replay(recorded, "--tools", "live")
    finally:
        weather.write_text(original)
    assert done.returncode != 0
    (first,) = report["divergences"]
    assert first["call"] == 2 and first["recorded_index"] == 2
    (diff,) = first["differences"]
    assert diff.startswith(TOOL_OUTPUT.get(provider(recorded), "body.messages[3].content") + ": ")
    assert '\\"temp_c\\": 18' in diff and '\\"temp_c\\": 25' in diff
    assert [c["status"] for c in report["calls"]] == ["replayed", "stopped"]


def test_continue_answers_in_recorded_order_after_a_divergence(recorded):
    changed = ("--prompt", "Be brief.", *recorded.args)
    done, report = replay(recorded, "--on-divergence", "continue", agent_args=changed)
    assert json.loads(agent_output(done)) == json.loads(recorded.output)
    assert [d["call"] for d in report["divergences"]] == [1, 2]
    assert report["answered"] == 2 and done.returncode == 1


def _own_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (none: ``None``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 9))  # a UDP connect sends nothing: it picks the route
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(address).is_loopback else address


def test_a_request_to_a_host_not_recorded_is_refused_and_never_sent(recorded):
    """Another host (this machine's own non-loopback address: another port of the recorded
    loopback host is that host, see test_demo.py) is refused."""
    address = _own_address()
    if address is None:
        pytest.skip("no non-loopback IPv4 address on this machine")
    with FakeLLMServer(host=address) as elsewhere:  # alive: a request sent would reach it
        url = elsewhere.base_url
        done, report = replay(recorded, base_url=url)
        assert elsewhere.requests == []
    assert done.returncode != 0
    assert report["refused"] and report["refused"][0].startswith(f"POST {url}")
    assert "refused, not sent" in done.stderr and "never talked to" in done.stderr


def test_then_live_continues_against_the_named_endpoint(recorded):
    stream = "--stream" in recorded.args
    with FakeLLMServer() as live:
        live.queue(*SCRIPTS[provider(recorded), stream])
        changed = ("--prompt", "Be brief.", *recorded.args)
        done, report = replay(recorded, "--then-live", live.base_url, agent_args=changed)
        sent = list(live.requests)
    assert [system_prompt(r["body"]) for r in sent] == ["Be brief.", "Be brief."]
    assert json.loads(agent_output(done))["answer"] == "It is 18°C and sunny in Paris."
    assert report["live"] is True and [c["status"] for c in report["calls"]] == ["live", "live"]
    assert any(API_KEY in v for v in sent[0]["headers"].values())  # the agent's own key, sent live


def test_tools_recorded_runs_with_the_tools_files_absent(recorded):
    (recorded.cwd / "weather.json").rename(recorded.cwd / "weather.moved")
    try:
        done, report = replay(recorded, "--tools", "recorded")
    finally:
        (recorded.cwd / "weather.moved").rename(recorded.cwd / "weather.json")
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    new = [p for p in (recorded.cwd / "agent-sessions").glob("*.checkpoint.jsonl") if p != recorded.session]
    tool_ends = [
        e for p in new for e in entries(p)
        if e["type"] in ("span.start", "span.end") and e["name"] == "execute_tool get_weather"
        and (e.get("attributes") or {}).get("agent_trace.replay.tool_result") == "recorded"
    ]  # fmt: skip
    assert tool_ends, "no tool call answered from the recording"


def test_a_trace_tier_recording_says_it_has_no_content_and_which_tier_to_record(tmp_path):
    rec = record(AGENTS["openai"], tmp_path, tier="trace")
    done, _report = replay(rec)
    assert done.returncode == 2
    assert "trace tier" in done.stderr and "AGENT_TRACE_TIER=checkpoint" in done.stderr


def test_the_trace_tier_never_holds_an_exchange(tmp_path):
    rec = record(AGENTS["openai"], tmp_path, tier="both")
    trace = next(p for p in (tmp_path / "agent-sessions").glob("*.jsonl") if ".checkpoint" not in p.name)
    text = trace.read_text()
    assert "http_exchanges" not in text and "You answer weather questions" not in text
    assert "chat.completion" not in text and "/v1/chat/completions" not in text  # no body, no URL kept
    assert API_KEY not in rec.session.read_text()
    # ... while its checkpoint file holds them, as the checkpoint tier alone does
    assert len(_exchanges(rec.session)) == 2


def test_a_recording_made_with_both_tiers_replays_from_its_checkpoint_file(tmp_path):
    """``AGENT_TRACE_TIER=both`` (what the trace-tier refusal advises): its checkpoint file holds
    what the checkpoint tier alone holds, so it replays with the server stopped."""
    rec = record(AGENTS["openai"], tmp_path, "--stream", stream=True, tier="both")
    done, report = replay(rec)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == rec.output
    assert report["answered"] == report["recorded_exchanges"] == 2 and report["divergences"] == []
