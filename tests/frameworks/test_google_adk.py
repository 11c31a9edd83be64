"""Google ADK (an ``LlmAgent`` with a function tool on ADK's ``OpenAILlm``, run by an
``InMemoryRunner``) against the replay server. ADK emits its own GenAI spans (``invoke_workflow``,
``invoke_agent``, ``generate_content``, ``execute_tool`` with the call id): they are kept and
enriched, none doubled (the openai call adopts ADK's model span: its messages and snapshot reach
the session); one trace per run, the session id on every span; what the server saw matching what
was recorded; and the recorded conversation continued by a new ADK session.

google-adk pins google-genai < 3 and its own OpenTelemetry: these run in a virtualenv of their own
(``python -m tests.services.adk_venv run``, a step of .ci/run)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("openai")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.run_config import RunConfig, StreamingMode  # noqa: E402
from google.adk.integrations.openai import OpenAILlm  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.offline.resume import resume_and_continue, resume_from_snapshot  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
RUN = (
    "invoke_workflow weather",
    [
        (
            "invoke_agent weather",
            [
                ("generate_content gpt-4o-mini", []),
                ("execute_tool get_weather", []),
                ("generate_content gpt-4o-mini", []),
            ],
        )
    ],
)


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _agent(llm: Any) -> LlmAgent:
    model = OpenAILlm(model="gpt-4o-mini", base_url=llm.openai_url, api_key="sk-test")
    return LlmAgent(
        name="weather", model=model, instruction="You answer weather questions.", tools=[get_weather]
    )


async def _run(agent: LlmAgent, streamed: bool) -> str | None:
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="u1")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streamed else StreamingMode.NONE)
    message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    answer = None
    async for event in runner.run_async(
        user_id="u1", session_id=session.id, new_message=message, run_config=config
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts)
    return answer


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "sse"])
def test_its_spans_are_enriched_one_tree_per_run(streamed, llm, checkpoint, memory_exporter):
    suffix = "_stream" if streamed else ""
    llm.queue(f"openai_chat_tool_call{suffix}", f"openai_chat_final{suffix}")
    assert asyncio.run(_run(_agent(llm), streamed)) == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    genai = [s for s in finished if not s.name.startswith(("POST", "GET"))]
    assert {s.instrumentation_scope.name for s in genai} == {"gcp.vertex.agent"}  # ADK's, none of ours
    spans = [s for s in spans_of(files[0]) if not s.name.startswith(("POST", "GET"))]
    assert tree(spans) == [RUN]
    tool = next(s for s in finished if s.name == "execute_tool get_weather")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"
    # ADK's one model span per call says what the call returned: ADK's own finish reason and
    # usage as ADK set them; the response id and model (ADK never reads them) and the tool call
    # the model asked for, from the openai call underneath
    n = 2 if streamed else 1
    models = sorted(
        (s for s in finished if s.name == "generate_content gpt-4o-mini"), key=lambda s: s.start_time or 0
    )
    assert [_results(s) for s in models] == [
        (f"chatcmpl-tool00{n}", "gpt-4o-mini-2024-07-18", ("stop",), 81, 16),
        (f"chatcmpl-final0{n}", "gpt-4o-mini-2024-07-18", ("stop",), 112, 12),
    ]
    assert models[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)

    sent = llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == sent[3]["tool_call_id"] == "call_weather_1"
    assert json.loads(sent[3]["content"]) == {"result": TOOL_OUTPUT}  # ADK wraps a result
    session = oat.load_session(checkpoint_file)
    recorded = session.conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "tool", "assistant"]
    assert recorded[3]["tool_call_id"] == "call_weather_1" and recorded[-1]["content"] == ANSWER
    assert len([e for e in session.events if e.type == "snapshot"]) == 2
    in_session = spans_of(checkpoint_file)
    agent_entry = next(s for s in in_session if s.name == "invoke_agent weather")
    assert agent_entry.content["agent_input"] == QUESTION and agent_entry.content["agent_output"] == ANSWER
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT


def _results(span: Any) -> tuple[Any, ...]:
    """What a model span says the call returned, as a trace viewer shows it."""
    return tuple(
        span.attributes.get(key)
        for key in (
            "gen_ai.response.id",
            "gen_ai.response.model",
            "gen_ai.response.finish_reasons",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        )
    )


def test_the_recorded_conversation_is_continued_by_a_new_adk_session(llm, checkpoint):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    asyncio.run(_run(_agent(llm), False))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    session = oat.load_session(path)
    agent = _agent(llm)
    restored = resume_from_snapshot(session, None, agent=agent)
    assert restored.target == "google_adk"
    assert [c.role for c in restored.restored] == ["user", "model", "user", "model"]
    call = restored.restored[1].parts[0].function_call
    assert (call.id, call.name, call.args) == ("call_weather_1", "get_weather", {"city": "Paris"})

    llm.reset()
    done = resume_and_continue(session, None, "And tomorrow?", agent)  # the server's default answer
    assert done.answer == "Hello! How can I help you today?"
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == QUESTION and sent[3]["tool_call_id"] == "call_weather_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert sent[4]["content"] == ANSWER and sent[-1]["content"] == "And tomorrow?"
