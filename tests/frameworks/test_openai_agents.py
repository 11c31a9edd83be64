"""OpenAI Agents SDK runs through the SDK's own OpenAI models (chat completions and responses,
plain and streamed) against the replay server: one ``invoke_agent`` span per run, a handoff
nested under the agent that handed over, every model and tool call under its agent, one trace
per run, the session id on every span, and the SDK's own tracing untouched."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import openai  # noqa: E402
from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
)
from agents.tracing import TracingProcessor, set_trace_processors  # noqa: E402
from agents.tracing.setup import get_trace_provider  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from tests.context.helpers import spans_of, tree  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
SHAPE = [
    (
        "invoke_agent triage",
        [
            ("chat gpt-4o-mini", []),
            (
                "invoke_agent weather",
                [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
            ),
        ],
    )
]


@function_tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


class SdkTraces(TracingProcessor):
    """The SDK's own tracing, collected in memory (its default processor would export to the vendor)."""

    def __init__(self) -> None:
        self.traces: list[str] = []
        self.spans: list[tuple[str, str]] = []

    def on_trace_start(self, trace: Any) -> None:
        self.traces.append(trace.trace_id)

    def on_trace_end(self, trace: Any) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        pass

    def on_span_end(self, span: Any) -> None:
        self.spans.append((span.trace_id, span.span_data.type))

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture
def sdk_traces() -> Any:
    provider = get_trace_provider()
    before = list(getattr(getattr(provider, "_multi_processor", None), "_processors", ()))
    disabled = getattr(provider, "_manual_disabled", None)
    collected = SdkTraces()
    set_trace_processors([collected])
    agents.set_tracing_disabled(False)
    yield collected
    set_trace_processors(before)
    provider._manual_disabled = disabled  # as it was (None: the environment decides)


def _agents(llm: Any, api: str) -> Agent:
    client = openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    model_class = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
    model = model_class(model="gpt-4o-mini", openai_client=client)
    weather = Agent(
        name="weather",
        instructions="You answer weather questions.",
        handoff_description="Weather questions",
        model=model,
        tools=[get_weather],
    )
    return Agent(name="triage", instructions="Route the question.", model=model, handoffs=[weather])


def _script(llm: Any, api: str, streamed: bool) -> None:
    suffix = "_stream" if streamed else ""
    prefix = "openai_chat" if api == "chat" else "openai_responses"
    llm.queue(f"{prefix}_handoff{suffix}", f"{prefix}_tool_call{suffix}", f"{prefix}_final{suffix}")


async def _consume(result: Any) -> None:
    async for _event in result.stream_events():
        pass


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("how", ["run", "run_sync", "run_streamed"])
def test_one_agent_span_and_one_trace_per_run(api, how, llm, checkpoint, memory_exporter, sdk_traces):
    _script(llm, api, streamed=how == "run_streamed")
    triage = _agents(llm, api)
    if how == "run":
        result = asyncio.run(Runner.run(triage, QUESTION))
    elif how == "run_sync":
        result = Runner.run_sync(triage, QUESTION)
    else:

        async def streamed() -> Any:
            run = Runner.run_streamed(triage, QUESTION)
            await _consume(run)
            return run

        result = asyncio.run(streamed())
    assert result.final_output == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1  # one trace per run
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == SHAPE
    assert len({s.trace_id for s in spans}) == 1
    triage_span = next(s for s in finished if s.name == "invoke_agent triage")
    assert triage_span.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert triage_span.attributes["gen_ai.agent.name"] == "triage"
    assert triage_span.attributes["gen_ai.provider.name"] == "openai"
    assert triage_span.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    weather_span = next(s for s in finished if s.name == "invoke_agent weather")
    assert weather_span.attributes["gen_ai.agent.description"] == "Weather questions"
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == (
        "call_weather_1" if api == "chat" else "call_weather_r1"
    )
    # the SDK's own tracing still sees one trace of its own, with its agent, handoff and tool spans
    assert len(sdk_traces.traces) == 1
    kinds = [kind for _trace, kind in sdk_traces.spans]
    assert kinds.count("agent") == 2 and "handoff" in kinds and "function" in kinds
    assert {t for t, _kind in sdk_traces.spans} == set(sdk_traces.traces)


def test_run_input_and_output_reach_the_session(llm, checkpoint):
    _script(llm, "chat", streamed=False)
    Runner.run_sync(_agents(llm, "chat"), QUESTION)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    shareable = next(p for p in checkpoint.files if "checkpoint" not in p.name)
    checkpoint.stop()
    triage = next(s for s in spans_of(path) if s.name == "invoke_agent triage")
    assert triage.content["agent_input"] == QUESTION
    assert triage.content["agent_output"] == ANSWER
    # the shareable tier keeps their length and SHA-256 only (the tool's result preview is kept)
    text = shareable.read_text()
    assert QUESTION not in text and ANSWER not in text
    shared = next(s for s in spans_of(shareable) if s.name == "invoke_agent triage")
    assert shared.content["agent_input"]["chars"] == len(QUESTION)


def test_a_stream_left_unread_still_ends_its_span(llm, memory_exporter):
    _script(llm, "chat", streamed=True)

    async def abandoned() -> None:
        run = Runner.run_streamed(_agents(llm, "chat"), QUESTION)
        async for _event in run.stream_events():
            break  # the caller stops reading at the first event
        run.cancel()
        await asyncio.sleep(0.05)

    asyncio.run(abandoned())
    gc.collect()
    names = [s.name for s in memory_exporter.get_finished_spans()]
    assert names.count("invoke_agent triage") == 1


def test_a_failed_run_ends_its_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_error_400")
    triage = _agents(llm, "chat")
    with pytest.raises(openai.BadRequestError):
        Runner.run_sync(triage, QUESTION)
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent triage"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "BadRequestError"


def test_a_failed_streamed_run_ends_its_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_error_400")

    async def failing() -> None:
        await _consume(Runner.run_streamed(_agents(llm, "chat"), QUESTION))

    with pytest.raises(openai.BadRequestError):
        asyncio.run(failing())
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent triage"]
    assert span.status.status_code is StatusCode.ERROR


def test_concurrent_runs_are_separate_traces(llm, memory_exporter):
    client = openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    first = Agent(name="first", instructions="Answer.", model=model)
    second = Agent(name="second", instructions="Answer.", model=model)

    async def both() -> list[Any]:
        return await asyncio.gather(Runner.run(first, "Hi"), Runner.run(second, "Hi"))

    results = asyncio.run(both())  # the server's default answer, for each
    assert [r.final_output for r in results] == ["Hello! How can I help you today?"] * 2
    finished = memory_exporter.get_finished_spans()
    runs = {s.name: s for s in finished if s.name.startswith("invoke_agent")}
    assert sorted(runs) == ["invoke_agent first", "invoke_agent second"]
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert sorted(c.parent.span_id for c in chats) == sorted(r.context.span_id for r in runs.values())
    assert len({s.context.trace_id for s in finished}) == 2


def test_the_sdk_session_is_the_conversation(llm, memory_exporter):
    from agents import SQLiteSession

    client = openai.AsyncOpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)
    agent = Agent(name="chat", model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client))
    Runner.run_sync(agent, "Hi", session=SQLiteSession("conversation-7"))
    (run,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent chat"]
    assert run.attributes["gen_ai.conversation.id"] == "conversation-7"
