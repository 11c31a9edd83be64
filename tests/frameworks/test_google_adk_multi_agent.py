"""Google ADK multi-agent runs on ``Gemini`` against the local server (Gemini's REST JSON):

* a root ``LlmAgent`` with a sub-agent it transfers to (``transfer_to_agent``);
* a ``SequentialAgent`` of two ``LlmAgent`` s;
* a ``LoopAgent`` of two ``LlmAgent`` s run twice, the second leaving it with ADK's ``exit_loop``;
* a ``ParallelAgent`` of two ``LlmAgent`` s (the server answers each agent from its own script:
  the branches ask in any order).

One trace per run, each sub-agent's ``invoke_agent`` span under its parent's, its model and tool
calls under it with the model's call ids; the session's messages and snapshots; the recorded
conversation continued by a new ADK session; the runs model-replayed with the server stopped.

google-adk pins google-genai < 3: these run in the ADK virtualenv (``python -m
tests.services.adk_venv run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent  # noqa: E402
from google.adk.agents.run_config import RunConfig, StreamingMode  # noqa: E402
from google.adk.models.google_llm import Gemini  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools.exit_loop_tool import exit_loop  # noqa: E402
from google.genai import types  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.instrumentation.google_genai import GoogleGenAIInstrumentor  # noqa: E402
from otel_agent_trace.model_replay import model_replay  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402
from tests.genai.genai_helpers import strip_digests  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, exchanges_kept, record_then_replay  # noqa: E402

MODEL = "gemini-2.0-flash"
GENERATE = f"generate_content {MODEL}"
QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."


def _response(parts: list[dict[str, Any]], response_id: str) -> dict[str, Any]:
    return {
        "status": 200,
        "json": {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "index": 0, "finishReason": "STOP"}
            ],
            "modelVersion": MODEL,
            "responseId": response_id,
            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 8, "totalTokenCount": 58},
        },
    }


def _call(name: str, args: dict[str, Any], call_id: str, response_id: str) -> dict[str, Any]:
    return _response([{"functionCall": {"name": name, "args": args, "id": call_id}}], response_id)


TRANSFER = _call("transfer_to_agent", {"agent_name": "weather"}, "call_transfer_1", "resp-transfer")
WEATHER_CALL = _call("get_weather", {"city": "Paris"}, "call_weather_1", "resp-weather-call")
WEATHER_ANSWER = _response([{"text": ANSWER}], "resp-weather-answer")
REPORT = "Weather report: 18°C, sunny."
WRITER_ANSWER = _response([{"text": REPORT}], "resp-writer")


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


def _weather(base_url: str) -> LlmAgent:
    return LlmAgent(
        name="weather",
        model=Gemini(model=MODEL, base_url=base_url),
        description="Answers weather questions.",
        instruction="You answer weather questions.",
        tools=[get_weather],
    )


def _coordinator(base_url: str) -> LlmAgent:
    return LlmAgent(
        name="coordinator",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You hand each question to the agent that knows.",
        sub_agents=[_weather(base_url)],
    )


def _pipeline(base_url: str) -> SequentialAgent:
    writer = LlmAgent(
        name="writer",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You write the weather found as a short report.",
    )
    return SequentialAgent(name="pipeline", sub_agents=[_weather(base_url), writer])


def _streamed(recording: dict[str, Any]) -> dict[str, Any]:
    """``recording`` as Gemini's SSE stream: a text in two chunks, the finish reason and usage
    with the last; a function call in one chunk."""
    answer = recording["json"]
    candidate = answer["candidates"][0]
    parts = candidate["content"]["parts"]
    chunks: list[list[dict[str, Any]]] = [parts]
    if len(parts) == 1 and "text" in parts[0]:
        text = parts[0]["text"]
        chunks = [[{"text": text[:10]}], [{"text": text[10:]}]]
    events = []
    for number, chunk in enumerate(chunks, 1):
        data: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": chunk}, "index": 0}],
            "modelVersion": MODEL,
            "responseId": answer["responseId"],
        }
        if number == len(chunks):
            data["candidates"][0]["finishReason"] = candidate["finishReason"]
            data["usageMetadata"] = answer["usageMetadata"]
        events.append({"data": data})
    return {"status": 200, "sse": events}


async def _run(agent: Any, streamed: bool = False, question: str = QUESTION) -> dict[str, Any]:
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="u1")
    message = types.Content(role="user", parts=[types.Part(text=question)])
    config = RunConfig(streaming_mode=StreamingMode.SSE if streamed else StreamingMode.NONE)
    calls, answers = [], []
    async for event in runner.run_async(
        user_id="u1", session_id=session.id, new_message=message, run_config=config
    ):
        if event.partial:  # (SSE: a text's pieces, then the whole)
            continue
        for call in event.get_function_calls():
            calls.append((event.author, call.name, call.args))
        if event.is_final_response() and event.content and event.content.parts:
            answers.append((event.author, "".join(p.text or "" for p in event.content.parts)))
    return {"tool_calls": calls, "answers": answers}


TRANSFER_SCRIPT = (TRANSFER, WEATHER_CALL, WEATHER_ANSWER)
SEQUENTIAL_SCRIPT = (WEATHER_CALL, WEATHER_ANSWER, WRITER_ANSWER)


def _script(script: tuple[dict[str, Any], ...], streamed: bool) -> tuple[dict[str, Any], ...]:
    return tuple(_streamed(r) for r in script) if streamed else script


STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["plain", "sse"])
WEATHER_STEPS = [(GENERATE, []), ("execute_tool get_weather", []), (GENERATE, [])]
# ADK 2 ends the root's run at the transfer; the agent transferred to runs next, as the workflow's
# next node: its invoke_agent span is under invoke_workflow, beside the root's (ADK's own tree).
TRANSFER_RUN = (
    "invoke_workflow coordinator",
    [
        ("invoke_agent coordinator", [(GENERATE, []), ("execute_tool transfer_to_agent", [])]),
        ("invoke_agent weather", WEATHER_STEPS),
    ],
)
SEQUENTIAL_RUN = (
    "invoke_workflow pipeline",
    [
        (
            "invoke_agent pipeline",
            [("invoke_agent weather", WEATHER_STEPS), ("invoke_agent writer", [(GENERATE, [])])],
        )
    ],
)
CONTEXT = "For context:"  # how ADK hands another agent's turns to the next agent's model


def _recorded(checkpoint: Any, memory_exporter: Any) -> tuple[list[Any], Any, list[Any], list[Any]]:
    """The finished spans (one trace, the session's id on each, ADK's only), the session, the
    trace tier's spans and the checkpoint tier's entries."""
    trace_file = next(p for p in checkpoint.files if "checkpoint" not in p.name)
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()
    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    genai = [s for s in finished if not s.name.startswith(("POST", "GET"))]
    assert {s.instrumentation_scope.name for s in genai} == {"gcp.vertex.agent"}  # ADK's, none of ours
    spans = [s for s in spans_of(trace_file) if not s.name.startswith(("POST", "GET"))]
    return finished, oat.load_session(checkpoint_file), spans, spans_of(checkpoint_file)


def _model_spans(finished: list[Any]) -> list[Any]:
    return sorted((s for s in finished if s.name == GENERATE), key=lambda s: s.start_time or 0)


def _entry(entries: list[Any], name: str) -> Any:
    return next(s for s in entries if s.name == name)


@STREAMED
def test_a_transfer_to_a_sub_agent_is_one_trace_with_its_calls_under_it(
    streamed, llm, checkpoint, memory_exporter
):
    llm.queue(*_script(TRANSFER_SCRIPT, streamed))
    done = asyncio.run(_run(_coordinator(llm.base_url), streamed))
    assert done == {
        "tool_calls": [
            ("coordinator", "transfer_to_agent", {"agent_name": "weather"}),
            ("weather", "get_weather", {"city": "Paris"}),
        ],
        "answers": [("weather", ANSWER)],
    }
    finished, session, spans, entries = _recorded(checkpoint, memory_exporter)
    assert tree(spans) == [TRANSFER_RUN]
    models = _model_spans(finished)
    assert [s.attributes["gen_ai.agent.name"] for s in models] == ["coordinator", "weather", "weather"]
    assert [s.attributes["gen_ai.response.id"] for s in models] == [
        "resp-transfer",
        "resp-weather-call",
        "resp-weather-answer",
    ]
    ids = {s.name: s.attributes["gen_ai.tool.call.id"] for s in finished if s.name.startswith("execute_tool")}
    assert ids == {
        "execute_tool transfer_to_agent": "call_transfer_1",
        "execute_tool get_weather": "call_weather_1",
    }

    # what the server saw: the sub-agent's model is told of the transfer, then its own call and result
    method = "streamGenerateContent" if streamed else "generateContent"
    assert [r["path"].rpartition(":")[2] for r in llm.requests] == [method] * 3
    sent = [r["body"]["contents"] for r in llm.requests]
    assert [len(c) for c in sent] == [1, 3, 5]
    assert CONTEXT in sent[1][1]["parts"][0]["text"] and "transfer_to_agent" in sent[1][1]["parts"][1]["text"]
    assert sent[2][3]["parts"][0]["functionCall"]["id"] == "call_weather_1"
    assert sent[2][4]["parts"][0]["functionResponse"]["id"] == "call_weather_1"

    # the session: each agent's input and output, each tool's, each model call's messages
    coordinator = _entry(entries, "invoke_agent coordinator")
    assert coordinator.content == {"agent_input": QUESTION}  # it answered nothing: it transferred
    weather = _entry(entries, "invoke_agent weather")
    assert weather.content == {"agent_input": QUESTION, "agent_output": ANSWER}
    assert _entry(entries, "execute_tool transfer_to_agent").content["tool_arguments"] == {
        "agent_name": "weather"
    }
    tool = _entry(entries, "execute_tool get_weather")
    assert tool.content == {"tool_arguments": {"city": "Paris"}, "tool_result": "18°C and sunny in Paris"}
    snapshots = session.snapshots
    assert len(snapshots) == 3  # one per model call, each with its agent's prompt and tools
    assert snapshots[0]["system_prompt"].startswith("You hand each question to the agent that knows.")
    assert [s["system_prompt"].startswith("You answer weather questions.") for s in snapshots] == [
        False,
        True,
        True,
    ]
    assert snapshots[0]["tools_loaded"] == ["transfer_to_agent"]
    assert snapshots[-1]["tools_loaded"] == ["transfer_to_agent", "get_weather"]
    assert snapshots[-1]["last_result"] == ANSWER
    recorded = strip_digests(session.conversation())  # the last model call's: what it was sent
    assert [m["role"] for m in recorded] == ["user", "user", "user", "model", "user", "model"]
    assert recorded[3]["content"][0]["function_call"]["id"] == "call_weather_1"
    assert recorded[-1]["content"] == [{"text": ANSWER}]


@STREAMED
def test_a_sequential_agent_is_one_trace_each_sub_agent_under_it(streamed, llm, checkpoint, memory_exporter):
    llm.queue(*_script(SEQUENTIAL_SCRIPT, streamed))
    done = asyncio.run(_run(_pipeline(llm.base_url), streamed))
    assert done == {
        "tool_calls": [("weather", "get_weather", {"city": "Paris"})],
        "answers": [("weather", ANSWER), ("writer", REPORT)],
    }
    finished, session, spans, entries = _recorded(checkpoint, memory_exporter)
    assert tree(spans) == [SEQUENTIAL_RUN]
    models = _model_spans(finished)
    assert [s.attributes["gen_ai.agent.name"] for s in models] == ["weather", "weather", "writer"]
    assert [s.attributes["gen_ai.response.id"] for s in models] == [
        "resp-weather-call",
        "resp-weather-answer",
        "resp-writer",
    ]
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"

    method = "streamGenerateContent" if streamed else "generateContent"
    assert [r["path"].rpartition(":")[2] for r in llm.requests] == [method] * 3
    sent = [r["body"]["contents"] for r in llm.requests]
    assert [len(c) for c in sent] == [1, 3, 4]  # the writer is told what the first agent did
    assert all(CONTEXT in c["parts"][0]["text"] for c in sent[2][1:])

    # the SequentialAgent's span: the run's input, its last sub-agent's answer
    assert _entry(entries, "invoke_agent pipeline").content == {
        "agent_input": QUESTION,
        "agent_output": REPORT,
    }
    assert _entry(entries, "invoke_agent weather").content == {
        "agent_input": QUESTION,
        "agent_output": ANSWER,
    }
    assert _entry(entries, "invoke_agent writer").content == {"agent_input": QUESTION, "agent_output": REPORT}
    snapshots = session.snapshots
    assert len(snapshots) == 3
    assert [s["tools_loaded"] for s in snapshots] == [["get_weather"], ["get_weather"], []]
    assert snapshots[1]["last_result"] == ANSWER and snapshots[2]["last_result"] == REPORT
    assert snapshots[2]["system_prompt"].startswith("You write the weather found as a short report.")
    recorded = strip_digests(session.conversation())
    assert [m["role"] for m in recorded] == ["user", "user", "user", "user", "model"]
    assert recorded[-1]["content"] == [{"text": REPORT}]


@STREAMED
@pytest.mark.parametrize("kind", ["transfer", "sequential"])
def test_model_replay_with_the_server_stopped(kind, streamed, tmp_path):
    make, script = (_coordinator, TRANSFER_SCRIPT) if kind == "transfer" else (_pipeline, SEQUENTIAL_SCRIPT)

    def run(base_url: str) -> dict[str, Any]:
        return asyncio.run(_run(make(base_url), streamed))

    recorded, replayed, report, path = record_then_replay(tmp_path, _script(script, streamed), run)
    assert replayed == recorded and recorded["answers"][-1][1] == (ANSWER if kind == "transfer" else REPORT)
    assert report["answered"] == 3 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == [GENERATE] * 3  # ADK's spans, adopted


def test_the_transfer_run_is_continued_by_a_new_adk_session(llm, checkpoint):
    llm.queue(*TRANSFER_SCRIPT)
    asyncio.run(_run(_coordinator(llm.base_url)))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _coordinator(llm.base_url)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "google_adk"
    assert [c.role for c in restored.restored] == ["user", "user", "user", "model", "user", "model"]
    call = restored.restored[3].parts[0].function_call
    assert (call.id, call.name, call.args) == ("call_weather_1", "get_weather", {"city": "Paris"})

    llm.reset()
    llm.queue(_response([{"text": "Tomorrow: 20°C."}], "resp-tomorrow"))
    done = resume_and_continue(session, None, "And tomorrow?", agent)
    assert done.answer == "Tomorrow: 20°C."
    sent = llm.requests[-1]["body"]["contents"]
    assert sent[0]["parts"] == [{"text": QUESTION}]
    calls = [p["functionCall"] for c in sent for p in c["parts"] if "functionCall" in p]
    assert calls == [{"id": "call_weather_1", "name": "get_weather", "args": {"city": "Paris"}}]
    assert any(p.get("text") == ANSWER for c in sent for p in c["parts"])
    assert sent[-1] == {"role": "user", "parts": [{"text": "And tomorrow?"}]}


# -- LoopAgent ----------------------------------------------------------------------------------

CHECK_AGAIN = "Check again."
STILL = "Still 18°C and sunny in Paris."
EXIT_CALL = _call("exit_loop", {}, "call_exit_1", "resp-exit")
LOOP_SCRIPT = (
    WEATHER_CALL,
    WEATHER_ANSWER,
    _response([{"text": CHECK_AGAIN}], "resp-check-1"),
    _response([{"text": STILL}], "resp-weather-again"),
    EXIT_CALL,
)
LOOP_RUN = (
    "invoke_workflow refine",
    [
        (
            "invoke_agent refine",
            [
                ("invoke_agent weather", WEATHER_STEPS),
                ("invoke_agent checker", [(GENERATE, [])]),
                ("invoke_agent weather", [(GENERATE, [])]),
                ("invoke_agent checker", [(GENERATE, []), ("execute_tool exit_loop", [])]),
            ],
        )
    ],
)


def _loop(base_url: str) -> LoopAgent:
    checker = LlmAgent(
        name="checker",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You check the weather found; call exit_loop when it is right.",
        tools=[exit_loop],
    )
    return LoopAgent(name="refine", sub_agents=[_weather(base_url), checker], max_iterations=3)


@STREAMED
def test_a_loop_agent_is_one_trace_its_rounds_under_it(streamed, llm, checkpoint, memory_exporter):
    llm.queue(*_script(LOOP_SCRIPT, streamed))
    done = asyncio.run(_run(_loop(llm.base_url), streamed))
    assert done["tool_calls"] == [("weather", "get_weather", {"city": "Paris"}), ("checker", "exit_loop", {})]
    assert [a for a in done["answers"] if a[1]] == [  # (exit_loop's, summary skipped: no text)
        ("weather", ANSWER),
        ("checker", CHECK_AGAIN),
        ("weather", STILL),
    ]
    finished, session, spans, entries = _recorded(checkpoint, memory_exporter)
    assert tree(spans) == [LOOP_RUN]
    models = _model_spans(finished)
    assert [s.attributes["gen_ai.agent.name"] for s in models] == [
        "weather",
        "weather",
        "checker",
        "weather",
        "checker",
    ]
    assert [s.attributes["gen_ai.response.id"] for s in models] == [
        "resp-weather-call",
        "resp-weather-answer",
        "resp-check-1",
        "resp-weather-again",
        "resp-exit",
    ]
    ids = {s.name: s.attributes["gen_ai.tool.call.id"] for s in finished if s.name.startswith("execute_tool")}
    assert ids == {"execute_tool get_weather": "call_weather_1", "execute_tool exit_loop": "call_exit_1"}
    assert len(llm.requests) == 5  # it left at exit_loop, before its third round

    # the LoopAgent's span: the run's input, the last answer its sub-agents gave
    assert _entry(entries, "invoke_agent refine").content == {"agent_input": QUESTION, "agent_output": STILL}
    weather = [s.content for s in entries if s.name == "invoke_agent weather"]
    assert weather == [
        {"agent_input": QUESTION, "agent_output": ANSWER},
        {"agent_input": QUESTION, "agent_output": STILL},
    ]
    assert len(session.snapshots) == 5  # one per model call
    assert session.snapshots[-1]["tools_loaded"] == ["exit_loop"]


# -- ParallelAgent ------------------------------------------------------------------------------

NEWS = "Nothing new in Paris today."
NEWS_CALL = _call("get_news", {"city": "Paris"}, "call_news_1", "resp-news-call")
NEWS_ANSWER = _response([{"text": NEWS}], "resp-news-answer")
PARALLEL_SCRIPTS = {
    "You answer weather questions.": (WEATHER_CALL, WEATHER_ANSWER),
    "You tell the news.": (NEWS_CALL, NEWS_ANSWER),
}
PARALLEL_RUN = (
    "invoke_workflow fanout",
    [
        (
            "invoke_agent fanout",
            sorted(
                [
                    ("invoke_agent news", [(GENERATE, []), ("execute_tool get_news", []), (GENERATE, [])]),
                    ("invoke_agent weather", WEATHER_STEPS),
                ]
            ),
        )
    ],
)


def get_news(city: str) -> str:
    """News of a city."""
    return f"Nothing new in {city}"


class _ByAgent(FakeLLMServer):
    """The local server answering each agent from its own script, told by its instruction (a
    ParallelAgent's branches ask in any order)."""

    def __init__(self, scripts: dict[str, tuple[dict[str, Any], ...]]) -> None:
        super().__init__()
        self.scripts = {marker: list(script) for marker, script in scripts.items()}

    def next_recording(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        parts = (body.get("systemInstruction") or {}).get("parts") or [{}]
        instruction = "".join(p.get("text", "") for p in parts)
        with self._lock:
            for marker, script in self.scripts.items():
                if marker in instruction and script:
                    return script.pop(0)
        return None


def _scripts(streamed: bool) -> dict[str, tuple[dict[str, Any], ...]]:
    return {marker: _script(script, streamed) for marker, script in PARALLEL_SCRIPTS.items()}


def _fanout(base_url: str) -> ParallelAgent:
    news = LlmAgent(
        name="news",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You tell the news.",
        tools=[get_news],
    )
    return ParallelAgent(name="fanout", sub_agents=[_weather(base_url), news])


def _sorted(node: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    """A tree with the parallel agent's branches in name order (they start in any order)."""
    name, children = node
    if name == "invoke_agent fanout":
        children = sorted(children)
    return name, [_sorted(c) for c in children]


@STREAMED
def test_a_parallel_agent_is_one_trace_each_branch_under_it(streamed, checkpoint, memory_exporter):
    with _ByAgent(_scripts(streamed)) as server:
        done = asyncio.run(_run(_fanout(server.base_url), streamed))
        requests = list(server.requests)
    assert sorted(done["tool_calls"]) == [
        ("news", "get_news", {"city": "Paris"}),
        ("weather", "get_weather", {"city": "Paris"}),
    ]
    assert sorted(done["answers"]) == [("news", NEWS), ("weather", ANSWER)]
    finished, session, spans, entries = _recorded(checkpoint, memory_exporter)
    assert [_sorted(t) for t in tree(spans)] == [PARALLEL_RUN]
    # each branch's model calls under its own agent, with their response ids and tool calls' ids
    by_agent: dict[str, list[str]] = {}
    for s in _model_spans(finished):
        by_agent.setdefault(s.attributes["gen_ai.agent.name"], []).append(s.attributes["gen_ai.response.id"])
    assert by_agent == {
        "weather": ["resp-weather-call", "resp-weather-answer"],
        "news": ["resp-news-call", "resp-news-answer"],
    }
    ids = {s.name: s.attributes["gen_ai.tool.call.id"] for s in finished if s.name.startswith("execute_tool")}
    assert ids == {"execute_tool get_weather": "call_weather_1", "execute_tool get_news": "call_news_1"}
    assert len(requests) == 4

    # the ParallelAgent's span: the run's input, each branch's answer by its agent's name
    assert _entry(entries, "invoke_agent fanout").content == {
        "agent_input": QUESTION,
        "agent_output": {"weather": ANSWER, "news": NEWS},
    }
    assert _entry(entries, "invoke_agent news").content == {"agent_input": QUESTION, "agent_output": NEWS}
    assert _entry(entries, "invoke_agent weather").content == {
        "agent_input": QUESTION,
        "agent_output": ANSWER,
    }
    snapshots = session.snapshots
    assert len(snapshots) == 4  # one per model call; each branch's answer the last result of one
    assert {ANSWER, NEWS} <= {s["last_result"] for s in snapshots}


@STREAMED
def test_a_loop_agent_model_replayed_with_the_server_stopped(streamed, tmp_path):
    def run(base_url: str) -> dict[str, Any]:
        return asyncio.run(_run(_loop(base_url), streamed))

    recorded, replayed, report, path = record_then_replay(tmp_path, _script(LOOP_SCRIPT, streamed), run)
    assert replayed == recorded and [a for a in recorded["answers"] if a[1]][-1] == ("weather", STILL)
    assert report["answered"] == 5 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == [GENERATE] * 5  # ADK's spans, adopted


@STREAMED
def test_a_parallel_agent_model_replayed_with_the_server_stopped(streamed, tmp_path):
    """Recorded against its server, then run again with that server stopped, answered from the
    recording: the same calls and answers (the branches' in any order), each exchange once."""
    with exchanges_kept():
        with _ByAgent(_scripts(streamed)) as server:
            base_url = server.base_url
            session = oat.session("replayed", directory=tmp_path, tier="checkpoint").start()
            try:
                recorded = asyncio.run(_run(_fanout(base_url), streamed))
            finally:
                session.stop()
            assert len(server.requests) == 4
        (path,) = tmp_path.glob("*.checkpoint.jsonl")
        with model_replay(path) as player:
            replayed = asyncio.run(_run(_fanout(base_url), streamed))
    report = player.report()
    assert {k: sorted(v) for k, v in replayed.items()} == {k: sorted(v) for k, v in recorded.items()}
    assert sorted(recorded["answers"]) == [("news", NEWS), ("weather", ANSWER)]
    assert report["answered"] == 4 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == [GENERATE] * 4  # ADK's spans, adopted
