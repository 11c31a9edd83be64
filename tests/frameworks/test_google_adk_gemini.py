"""Google ADK on its default model, ``Gemini`` (the real ``google-genai`` client ADK installs,
2.x, against the local server speaking Gemini's REST JSON and SSE): ADK's own spans
(``invoke_workflow``, ``invoke_agent``, ``generate_content``, ``execute_tool`` with the model's call
id) kept and enriched, the google-genai call underneath adopting ADK's model span (no second
span; its messages and snapshot in the session), one trace; the run model-replayed with the
server stopped; the recorded conversation continued by a new ADK session.

google-adk pins google-genai < 3: these run in the ADK virtualenv (``python -m
tests.services.adk_venv run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.run_config import RunConfig, StreamingMode  # noqa: E402
from google.adk.models.google_llm import Gemini  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.instrumentation.google_genai import GoogleGenAIInstrumentor  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.genai.genai_helpers import strip_digests  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

MODEL = "gemini-2.0-flash"
QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
STEPS = [
    (f"generate_content {MODEL}", []),
    ("execute_tool get_weather", []),
    (f"generate_content {MODEL}", []),
]
RUN = ("invoke_workflow weather", [("invoke_agent weather", STEPS)])
SCRIPTS = {
    False: ("gemini_generate_tool_call_id", "gemini_generate_final"),
    True: ("gemini_generate_tool_call_stream", "gemini_generate_final_stream"),
}
RESPONSE_IDS = {  # the recordings' responseId
    False: ["resp-gemini-tool02", "resp-gemini-final01"],
    True: ["resp-gemini-stream01", "resp-gemini-stream02"],
}


@pytest.fixture(scope="module", autouse=True)
def google_genai_instrumented(provider):
    inst = GoogleGenAIInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    yield
    if mine:
        inst.uninstrument()


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "gemini-test-key")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(base_url: str) -> LlmAgent:
    model = Gemini(model=MODEL, base_url=base_url)
    return LlmAgent(
        name="weather", model=model, instruction="You answer weather questions.", tools=[get_weather]
    )


async def _run(agent: LlmAgent, streamed: bool) -> dict[str, Any]:
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="u1")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streamed else StreamingMode.NONE)
    message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    calls, answer = [], None
    async for event in runner.run_async(
        user_id="u1", session_id=session.id, new_message=message, run_config=config
    ):
        for call in [] if event.partial else event.get_function_calls():
            calls.append((call.name, call.args))
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts)
    return {"tool_calls": calls, "answer": answer}


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "sse"])
def test_its_spans_are_enriched_and_the_gemini_call_adopts_them(streamed, llm, checkpoint, memory_exporter):
    llm.queue(*SCRIPTS[streamed])
    done = asyncio.run(_run(_agent(llm.base_url), streamed))
    assert done == {"tool_calls": [("get_weather", {"city": "Paris"})], "answer": ANSWER}
    trace_file = next(p for p in checkpoint.files if "checkpoint" not in p.name)
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    assert [r["path"].rpartition("/")[2] for r in llm.requests] == [
        f"{MODEL}:{'streamGenerateContent' if streamed else 'generateContent'}"
    ] * 2
    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    genai = [s for s in finished if not s.name.startswith(("POST", "GET"))]
    assert {s.instrumentation_scope.name for s in genai} == {"gcp.vertex.agent"}  # ADK's, none of ours
    spans = [s for s in spans_of(trace_file) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == [RUN]
    model_spans = sorted(
        (s for s in finished if s.name == f"generate_content {MODEL}"), key=lambda s: s.start_time or 0
    )
    # ADK sets no response id (its LlmResponse drops Gemini's): the adopting call gives it
    assert [s.attributes.get("gen_ai.response.id") for s in model_spans] == RESPONSE_IDS[streamed]
    # and what else a trace viewer shows of each call: ADK's finish reason and usage, the model
    # that answered and the tool call asked for (which ADK leaves out) from the adopting call
    assert [
        tuple(
            s.attributes.get(key)
            for key in (
                "gen_ai.response.model",
                "gen_ai.response.finish_reasons",
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens",
                "agent_trace.tool_calls.names",
            )
        )
        for s in model_spans
    ] == [(MODEL, ("stop",), 60, 8, ("get_weather",)), (MODEL, ("stop",), 85, 12, None)]
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    call_id = tool.attributes["gen_ai.tool.call.id"]
    if streamed:  # Gemini sent no id: ADK's own, which it keeps from the model
        assert call_id.startswith("adk-")
    else:
        assert call_id == "call_weather_1"

    # what the server saw: the call and its result, with the model's id (ADK's own id never sent)
    sent = llm.requests[1]["body"]["contents"]
    assert [c["role"] for c in sent] == ["user", "model", "user"]
    function_call = sent[1]["parts"][-1]["functionCall"]
    function_response = sent[2]["parts"][0]["functionResponse"]
    assert function_response["response"] == {"result": "18°C and sunny in Paris"}
    if not streamed:
        assert function_call["id"] == function_response["id"] == "call_weather_1"
    else:
        assert "id" not in function_call and "id" not in function_response

    session = oat.load_session(checkpoint_file)
    recorded = strip_digests(session.conversation())
    assert [m["role"] for m in recorded] == ["user", "model", "user", "model"]
    assert recorded[0]["content"] == [{"text": QUESTION}]
    assert recorded[1]["content"][-1]["function_call"]["name"] == "get_weather"
    assert recorded[2]["content"][0]["function_response"]["response"] == {"result": "18°C and sunny in Paris"}
    assert recorded[3]["content"] == [{"text": ANSWER}]
    snapshots = session.snapshots
    assert len(snapshots) == 2
    assert snapshots[0]["system_prompt"].startswith("You answer weather questions.")
    assert snapshots[0]["tools_loaded"] == ["get_weather"]
    assert snapshots[-1]["last_result"] == ANSWER
    in_session = spans_of(checkpoint_file)
    agent_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert agent_entry.content["agent_input"] == QUESTION and agent_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "sse"])
def test_model_replay_with_the_server_stopped(streamed, tmp_path):
    def run(base_url: str) -> dict[str, Any]:
        return asyncio.run(_run(_agent(base_url), streamed))

    recorded, replayed, report, path = record_then_replay(tmp_path, SCRIPTS[streamed], run)
    assert replayed == recorded and recorded["answer"] == ANSWER
    assert report["answered"] == 2 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == [f"generate_content {MODEL}"] * 2  # ADK's spans, adopted


def test_the_recorded_conversation_is_continued_by_a_new_adk_session(llm, checkpoint):
    llm.queue(*SCRIPTS[False])
    asyncio.run(_run(_agent(llm.base_url), False))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm.base_url)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "google_adk"
    assert [c.role for c in restored.restored] == ["user", "model", "user", "model"]
    call = next(p.function_call for p in restored.restored[1].parts if p.function_call)
    assert (call.id, call.name, call.args) == ("call_weather_1", "get_weather", {"city": "Paris"})

    llm.reset()
    llm.queue("gemini_generate_final")
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == ANSWER
    sent = llm.requests[-1]["body"]["contents"]
    assert [c["role"] for c in sent] == ["user", "model", "user", "model", "user"]
    assert sent[0]["parts"] == [{"text": QUESTION}]
    assert sent[1]["parts"][-1]["functionCall"] == {
        "id": "call_weather_1",
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    assert sent[2]["parts"][0]["functionResponse"]["id"] == "call_weather_1"
    assert sent[3]["parts"] == [{"text": ANSWER}] and sent[-1]["parts"] == [{"text": "And tomorrow?"}]


AGENT_SCRIPT = """
import asyncio, json, os
from tests.frameworks.test_google_adk_gemini import _agent, _run
print(json.dumps(asyncio.run(_run(_agent(os.environ["FAKE_URL"]), True))))
"""


def test_zero_code_recording_replayed_by_the_cli_with_the_server_stopped(tmp_path):
    """``opentelemetry-instrument python agent.py`` (SSE), then ``otel-agent-trace replay
    --model-replay`` with the server stopped: no ``only instruments`` warning for the google-genai
    ADK installs, both streamed requests answered from the recording, the same output."""
    import subprocess
    import sys

    from tests.e2e.helpers import INSTRUMENT, clean_env
    from tests.fakes.llm_server import FakeLLMServer
    from tests.model_replay.conftest import REPO

    (tmp_path / "agent.py").write_text(AGENT_SCRIPT)
    env = {"GOOGLE_API_KEY": "gemini-test-key", "PYTHONPATH": str(REPO), "AGENT_TRACE_TIER": "checkpoint"}
    with FakeLLMServer() as server:
        server.queue(*SCRIPTS[True])
        base_url = server.base_url
        recorded = subprocess.run(
            [INSTRUMENT, sys.executable, "agent.py"],
            cwd=tmp_path,
            env=clean_env({**env, "FAKE_URL": base_url}),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert len(server.requests) == 2, recorded.stderr
    assert recorded.returncode == 0, recorded.stderr
    assert "only instruments" not in recorded.stderr
    (session,) = (tmp_path / "agent-sessions").glob("*.checkpoint.jsonl")
    report = tmp_path / "report.json"
    replayed = subprocess.run(
        [sys.executable, "-m", "otel_agent_trace.cli.main", "replay", str(session), "--model-replay",
         "--report", str(report), "--", sys.executable, "agent.py"],
        cwd=tmp_path,
        env=clean_env({**env, "FAKE_URL": base_url}),  # the server stopped
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.splitlines()[0] == recorded.stdout.strip()
    data = json.loads(report.read_text())
    assert data["answered"] == 2 and data["divergences"] == [] and data["refused"] == []
