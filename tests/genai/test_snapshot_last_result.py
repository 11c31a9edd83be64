"""A model call's automatic snapshot names the answer as ``last_result``: the text of the last
assistant message of the call's output, not every output message's text joined. A call's output
holds several messages when the provider runs a tool inside the call: the Responses API's hosted
tools (a message, the search, the answer) and google-genai's automatic function calling (the
model's "Let me check the weather." and its function call, the function's response, the answer).

The real clients against the local stub; the google-genai test runs where google-genai is
installed (its own virtualenv: ``python -m tests.services.genai run``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from otel_agent_trace.offline.loader import load_session

RECORDINGS = Path(__file__).resolve().parents[1] / "fakes" / "recordings"
ANSWER = "It is 18°C and sunny in Paris."
IN_ITS_VENV = "google-genai runs in its own virtualenv: python -m tests.services.genai run"


def _text_item(item_id: str, text: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def _responses(*output: dict[str, Any]) -> dict[str, Any]:
    """The recorded Responses API text answer with ``output`` as its items."""
    recording = copy.deepcopy(json.loads((RECORDINGS / "openai_responses_text.json").read_text()))
    recording["json"]["output"] = list(output)
    return recording


WEB_SEARCH = {
    "id": "ws_001",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "weather Paris today"},
}


@pytest.fixture
def openai_client(llm: Any) -> Any:
    """The openai client on the stub (skipped where openai is not installed: google-genai's venv)."""
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=llm.openai_url, api_key="sk-test", max_retries=0)


def _snapshot(checkpoint: Any) -> dict[str, Any]:
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    (snap,) = load_session(path).snapshots
    return snap


def test_a_hosted_tool_between_two_messages_leaves_the_answer_as_last_result(openai_client, llm, checkpoint):
    first, answer = _text_item("msg_1", "Let me look that up."), _text_item("msg_2", ANSWER)
    llm.queue(_responses(first, WEB_SEARCH, answer))
    response = openai_client.responses.create(
        model="gpt-4o-mini", input="What's the weather in Paris?", tools=[{"type": "web_search"}]
    )
    assert response.output_text == "Let me look that up." + ANSWER  # the SDK's own join, untouched
    snap = _snapshot(checkpoint)
    assert snap["last_query"] == "What's the weather in Paris?"
    assert snap["last_result"] == ANSWER


def test_a_message_before_a_function_call_is_the_last_result(openai_client, llm, checkpoint):
    """The last assistant message is the one with a role: a ``function_call`` item after it has none."""
    call = {
        "id": "fc_1",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    llm.queue(_responses(_text_item("msg_1", "Let me check the weather."), call))
    openai_client.responses.create(model="gpt-4o-mini", input="What's the weather in Paris?")
    assert _snapshot(checkpoint)["last_result"] == "Let me check the weather."


@pytest.fixture
def gemini(provider: Any, llm: Any) -> Any:
    """A google-genai client on the stub, instrumented (skipped where google-genai is not installed)."""
    genai = pytest.importorskip("google.genai", reason=IN_ITS_VENV)
    from otel_agent_trace.instrumentation.google_genai import GoogleGenAIInstrumentor

    inst = GoogleGenAIInstrumentor()
    mine = not inst.is_instrumented_by_opentelemetry
    if mine:
        inst.instrument(tracer_provider=provider)
    options = genai.types.HttpOptions(base_url=llm.base_url)
    yield genai.Client(api_key="gemini-test-key", http_options=options)
    if mine:
        inst.uninstrument()


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny, 18°C in {city}"


get_weather.__annotations__ = {"city": str, "return": str}  # (google-genai < 2.34 reads types)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_automatic_function_calling_leaves_the_answer_as_last_result(stream, gemini, llm, checkpoint):
    types = pytest.importorskip("google.genai.types", reason=IN_ITS_VENV)
    suffix = "_stream" if stream else ""
    first = "gemini_generate_tool_call_stream" if stream else "gemini_generate_tool_call_id"
    llm.queue(first, f"gemini_generate_final{suffix}")
    config = types.GenerateContentConfig(tools=[get_weather])
    ask = gemini.models.generate_content_stream if stream else gemini.models.generate_content
    response = ask(model="gemini-2.0-flash", contents="What's the weather in Paris?", config=config)
    text = "".join(c.text or "" for c in response) if stream else response.text
    assert text.endswith(ANSWER)
    assert len(llm.requests) == 2  # the function's result was sent back: two rounds in one call
    snap = _snapshot(checkpoint)
    assert snap["last_query"] == "What's the weather in Paris?"
    assert snap["last_result"] == ANSWER  # not "Let me check the weather.It is 18°C …"
