"""``--tools recorded`` for tools known only to a framework instrumentation (no ``@oat.tool``):
a LangChain ``@tool`` invoked with the model's ``ToolCall``, a Strands ``@tool``, an OpenAI
Agents SDK ``@function_tool``. Each example agent runs with ``--framework-tool``, recorded in the
checkpoint tier against the local fake model server, then replayed with that server stopped and
the tool's data file absent: the recorded result answers the call, the tool never runs."""

from __future__ import annotations

import json

import pytest

from .conftest import EXAMPLES, Recorded, agent_output, entries, record, replay

AGENTS = {
    "langchain": EXAMPLES / "langchain_weather.py",
    "agents-sdk": EXAMPLES / "agents_sdk_weather.py",
    "strands": EXAMPLES / "strands_weather.py",
}
# the Agents SDK streamed only, Strands always streams (see test_replay_agents.py)
RUNS = [("langchain", False), ("langchain", True), ("agents-sdk", True), ("strands", True)]


@pytest.fixture(scope="module", params=RUNS, ids=lambda p: f"{p[0]}-{'stream' if p[1] else 'plain'}")
def recorded(request, tmp_path_factory) -> Recorded:
    agent, stream = request.param
    cwd = tmp_path_factory.mktemp(f"{agent}-{'stream' if stream else 'plain'}-framework-tool")
    args = ["--framework-tool"] + (["--stream"] if stream else [])
    return record(AGENTS[agent], cwd, *args, stream=stream)


def _tool_spans(session) -> list[dict]:
    """The ``get_weather`` tool spans' ends, their start's attributes merged in."""
    starts: dict[str, dict] = {}
    ends = []
    for e in entries(session):
        if e.get("name") != "execute_tool get_weather":
            continue
        if e["type"] == "span.start":
            starts[e["span_id"]] = e.get("attributes") or {}
        elif e["type"] == "span.end":
            ends.append({**e, "attributes": {**starts.get(e["span_id"], {}), **(e.get("attributes") or {})}})
    return ends


def _weather_opens(session) -> list[dict]:
    """The sys layer's ``file.open`` events of ``weather.json`` (a failed open included): what
    the tool function does first."""
    return [
        e for e in entries(session)
        if e["type"] == "span.event" and e.get("name") == "file.open"
        and str((e.get("attributes") or {}).get("file.path", "")).endswith("weather.json")
    ]  # fmt: skip


def _without_weather(rec: Recorded, *options: str):
    """Replay with ``weather.json`` absent: the process, the report, and the replayed run's
    checkpoint session moved out of ``agent-sessions`` (so each test finds its own)."""
    (rec.cwd / "weather.json").rename(rec.cwd / "weather.moved")
    try:
        done, report = replay(rec, *options)
    finally:
        (rec.cwd / "weather.moved").rename(rec.cwd / "weather.json")
    new = [p for p in (rec.cwd / "agent-sessions").glob("*.checkpoint.jsonl") if p != rec.session]
    moved = []
    for p in new:
        moved.append(p.rename(rec.cwd / f"replayed-{len(list(rec.cwd.glob('replayed-*')))}.jsonl"))
    return done, report, moved


def test_the_recording_holds_one_framework_tool_span_with_the_call_id_and_result(recorded):
    (span,) = _tool_spans(recorded.session)  # no @oat.tool: the framework's span alone
    out = json.loads(recorded.output)
    assert out["tool_calls"] == [
        {"id": "call_weather_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    assert out["answer"] == "It is 18°C and sunny in Paris."
    assert span["attributes"]["gen_ai.tool.call.id"] == "call_weather_1"
    assert "18" in json.dumps(span["content"]["tool_result"])


@pytest.mark.parametrize("options", [("--tools", "recorded"), ()], ids=["recorded", "default"])
def test_tools_recorded_answers_the_framework_tool_and_never_runs_it(recorded, options):
    """``--tools recorded`` is the default: a recording from anyone runs none of your tools."""
    done, report, _new = _without_weather(recorded, *options)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    assert report["divergences"] == [] and report["refused"] == []
    assert [c["status"] for c in report["calls"]] == ["replayed", "replayed"]
    assert "no divergence" in done.stdout


def test_the_replayed_tool_span_says_recorded_and_holds_the_recorded_result(recorded):
    done, _report, (new,) = _without_weather(recorded, "--tools", "recorded")
    assert done.returncode == 0, done.stderr
    (span,) = _tool_spans(new)
    (old,) = _tool_spans(recorded.session)
    assert span["attributes"]["agent_trace.replay.tool_result"] == "recorded"
    assert span["attributes"]["gen_ai.tool.call.id"] == "call_weather_1"
    assert span["content"]["tool_result"] == old["content"]["tool_result"]
    assert (span.get("status") or {}).get("code") != "ERROR"
    # the tool function never ran: it opened weather.json when recorded, and nothing opens it now
    assert len(_weather_opens(recorded.session)) == 1
    assert _weather_opens(new) == []


def test_with_tools_live_the_framework_tool_runs_and_fails_without_its_file(recorded):
    """The control: the same replay with the tools live runs the tool, which finds no file."""
    done, report, (new,) = _without_weather(recorded, "--tools", "live")
    assert done.returncode != 0
    assert report.get("divergences") or "FileNotFoundError" in done.stderr, done.stderr
    (opened,) = _weather_opens(new)
    assert opened["attributes"]["error.type"] == "FileNotFoundError"


# An agent on the bare OpenAI SDK whose tool is an MCP server's (FastMCP, in-memory transport):
# the call is a bare ``ClientSession.call_tool`` (MCP has no call id: matched by name); on mcp 2.x
# MCPServer and the high-level ``Client.call_tool``.
MCP_AGENT = '''
import asyncio, json, os

import openai
try:  # mcp 2.x
    from mcp import Client as connect
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP
    from mcp.shared.memory import create_connected_server_and_client_session as connect

WEATHER_FILE = os.environ["WEATHER_FILE"]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
server = FastMCP("weather")


@server.tool()
def get_weather(city: str) -> str:
    """The weather in a city."""
    with open("tool-ran", "a") as mark:  # the server runs it in a worker thread: no span, no file event
        mark.write(city)
    with open(WEATHER_FILE, encoding="utf-8") as f:
        return json.dumps(json.load(f)[city])


async def call_tool(name, arguments):
    async with connect(server) as client:
        result = await client.call_tool(name, arguments)
    return result.content[0].text


client = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"], max_retries=0)
messages = [{"role": "system", "content": "You answer weather questions. Use the tools."},
            {"role": "user", "content": "What is the weather in Paris?"}]
calls = []
for _ in range(5):
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message = reply.choices[0].message.model_dump(exclude_none=True)
    messages.append(message)
    if not message.get("tool_calls"):
        break
    for call in message["tool_calls"]:
        arguments = json.loads(call["function"]["arguments"])
        calls.append({"id": call["id"], "name": call["function"]["name"], "arguments": arguments})
        text = asyncio.run(call_tool(call["function"]["name"], arguments))
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
print(json.dumps({"tool_calls": calls, "answer": message.get("content")}))
'''


@pytest.fixture(scope="module")
def mcp_recorded(tmp_path_factory) -> Recorded:
    cwd = tmp_path_factory.mktemp("mcp-framework-tool")
    script = cwd / "mcp_weather.py"
    script.write_text(MCP_AGENT)
    return record(script, cwd)


def test_tools_recorded_answers_a_bare_mcp_call_tool_and_never_calls_the_server(mcp_recorded):
    ran = mcp_recorded.cwd / "tool-ran"
    assert ran.read_text() == "Paris"  # when recorded
    ran.unlink()
    (old,) = _tool_spans(mcp_recorded.session)
    assert old["attributes"]["mcp.method.name"] == "tools/call"
    assert json.loads(mcp_recorded.output)["answer"] == "It is 18°C and sunny in Paris."
    done, report, (new,) = _without_weather(mcp_recorded, "--tools", "recorded")
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == mcp_recorded.output
    assert report["divergences"] == [] and report["refused"] == []
    (span,) = _tool_spans(new)
    assert span["attributes"]["agent_trace.replay.tool_result"] == "recorded"
    assert span["content"]["tool_result"] == old["content"]["tool_result"]
    assert not ran.exists()


def test_with_tools_live_the_mcp_server_runs_the_tool_without_its_file(mcp_recorded):
    ran = mcp_recorded.cwd / "tool-ran"
    ran.unlink(missing_ok=True)
    done, report, _new = _without_weather(mcp_recorded, "--tools", "live")
    assert done.returncode != 0 and report["divergences"]
    assert ran.read_text() == "Paris"
