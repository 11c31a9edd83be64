"""DSPy programs (``dspy.ReAct`` with a ``dspy.Tool``, ``Predict``, ``ChainOfThought``) on a
``dspy.LM("openai/gpt-4o-mini", engine="litellm")`` against the replay server: one
``invoke_agent`` span per top-level module call, sync and async, with the LiteLLM model calls and
the tool calls under it, one trace, the module's inputs and its ``Prediction`` in the session;
the tools' arguments and results, without call ids (a ReAct model writes the tool's name and
arguments as text); a tool's exception on its span; the run model-replayed with the server
stopped and its tools answered from the recording. DSPy caches model answers (on disk and in
memory) by default: the tests switch that off, so each run reaches the server — and one test
shows what a cached answer looks like (no request, no model span, the module's span still).
DSPy 3.4's native engine (the default ``engine="auto"``, its own HTTP client): one ``chat`` span
per call too (made at the engine, sync, async and streamed), its messages and snapshots in the
session and not in the shareable tier; with both engines in one program, no call twice; and
model-replayed from its HTTP exchanges (lm15's transport), a host never recorded refused."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of its price list at import

import pytest  # noqa: E402

dspy = pytest.importorskip("dspy")

from dspy import History  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from otel_agent_trace.instrumentation.dspy import DSPyInstrumentor  # noqa: E402
from otel_agent_trace.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402
from tests.context.helpers import spans_of, tree  # noqa: E402
from tests.genai.replay_helpers import exchange_holders, record_then_replay  # noqa: E402

QUESTION = "What's the weather in Paris?"
ANSWER = "It is 18°C and sunny in Paris."
TOOL_OUTPUT = "18°C and sunny in Paris"
SHAPE = [
    (
        "invoke_agent Weather",
        [
            ("chat gpt-4o-mini", []),
            ("execute_tool get_weather", []),
            ("chat gpt-4o-mini", []),
            ("execute_tool finish", []),  # ReAct's own tool: the model says it is done
            ("chat gpt-4o-mini", []),  # ReAct's ChainOfThought extracts the answer
        ],
    )
]


@pytest.fixture(scope="module", autouse=True)
def dspy_instrumented(provider: Any) -> Iterator[None]:
    instrumentors = [LiteLLMInstrumentor(), DSPyInstrumentor()]
    mine = [inst for inst in instrumentors if not inst.is_instrumented_by_opentelemetry]
    for inst in mine:
        inst.instrument(tracer_provider=provider)
    yield
    for inst in reversed(mine):
        inst.uninstrument()


@pytest.fixture(autouse=True)
def _no_dspy_cache() -> Iterator[None]:
    """DSPy answers a request it has seen from its cache (on disk under ~/.dspy_cache, and in
    memory) without calling the model: off, so every run reaches the server. (DSPy builds its
    default cache when ``dspy.cache`` is first read: not read here, so no ~/.dspy_cache is made.)"""
    configured = vars(dspy)
    before = configured.get("cache")
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    yield
    if before is None:
        configured.pop("cache", None)
    else:
        configured["cache"] = before


class Weather(dspy.Signature):
    """Answer weather questions."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _lm(base_url: str, **options: Any) -> Any:
    options = {"num_retries": 0, "cache": False, **options}
    if "engine" in inspect.signature(dspy.LM.__init__).parameters:  # DSPy 3.4: also its own client
        options.setdefault("engine", "litellm")
    return dspy.LM("openai/gpt-4o-mini", api_base=f"{base_url}/v1", api_key="sk-test", **options)


def _reply(n: int, fields: dict[str, str]) -> dict[str, Any]:
    """The model's answer as OpenAI's chat completions API sends it, in DSPy's ChatAdapter format
    (``[[ ## field ## ]]`` sections)."""
    text = "".join(f"[[ ## {k} ## ]]\n{v}\n\n" for k, v in fields.items()) + "[[ ## completed ## ]]"
    message = {"role": "assistant", "content": text}
    return {
        "status": 200,
        "json": {
            "id": f"chatcmpl-dspy{n}",
            "object": "chat.completion",
            "created": 1764400000,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 300 + 100 * n, "completion_tokens": 20, "total_tokens": 320 + 100 * n},
        },
    }


REACT_SCRIPT = (
    _reply(
        1,
        {
            "next_thought": "I look the weather up.",
            "next_tool_name": "get_weather",
            "next_tool_args": json.dumps({"city": "Paris"}),
        },
    ),
    _reply(2, {"next_thought": "I have it.", "next_tool_name": "finish", "next_tool_args": "{}"}),
    _reply(3, {"reasoning": "The tool said so.", "answer": ANSWER}),
)


def _react(tools: list[Any] | None = None) -> Any:
    return dspy.ReAct(Weather, tools=tools or [get_weather], max_iters=4)


def _run_react(base_url: str, how: str = "call", tools: list[Any] | None = None) -> Any:
    agent = _react(tools)
    with dspy.context(lm=_lm(base_url)):
        if how == "acall":
            return asyncio.run(agent.acall(question=QUESTION))
        return agent(question=QUESTION)


def _model_view(finished: Any) -> list[Any]:
    return [s for s in finished if not s.name.startswith(("POST", "GET"))]


@pytest.mark.parametrize("how", ["call", "acall"])
def test_a_react_run_is_one_agent_span_over_its_model_and_tool_calls(how, llm, checkpoint, memory_exporter):
    llm.queue(*REACT_SCRIPT)
    prediction = _run_react(llm.base_url, how)
    assert prediction.answer == ANSWER
    files = [p for p in checkpoint.files if "checkpoint" not in p.name]
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    session_id = checkpoint.session_id
    checkpoint.stop()

    finished = memory_exporter.get_finished_spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert all(s.attributes["agent_trace.session.id"] == session_id for s in finished)
    assert tree(_model_view(spans_of(files[0]))) == SHAPE  # ReAct's inner modules: no spans
    run = next(s for s in finished if s.name == "invoke_agent Weather")
    assert run.parent is None
    assert run.attributes["gen_ai.agent.name"] == "Weather"
    assert run.attributes["gen_ai.agent.description"] == "Answer weather questions."
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    tools = {s.name: s for s in finished if s.name.startswith("execute_tool")}
    assert set(tools) == {"execute_tool get_weather", "execute_tool finish"}
    assert all(t.parent.span_id == run.context.span_id for t in tools.values())
    weather = tools["execute_tool get_weather"].attributes
    assert weather["gen_ai.tool.name"] == "get_weather" and weather["gen_ai.tool.type"] == "function"
    assert weather["gen_ai.tool.description"] == "Weather of a city."
    # the model wrote the tool's name and arguments as text: no call id, none made up
    assert all("gen_ai.tool.call.id" not in t.attributes for t in tools.values())
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.attributes["gen_ai.response.id"] for c in chats] == [
        "chatcmpl-dspy1",
        "chatcmpl-dspy2",
        "chatcmpl-dspy3",
    ]
    assert all(c.parent.span_id == run.context.span_id for c in chats)

    # what the server saw: the tool's result in the trajectory of the second call
    bodies = [r["body"] for r in llm.requests]
    assert len(bodies) == 3
    assert TOOL_OUTPUT in json.dumps(bodies[1]["messages"], ensure_ascii=False)
    # ... and what the session holds: the module's inputs and Prediction, the tool's I/O
    in_session = spans_of(checkpoint_file)
    run_entry = next(s for s in in_session if s.name == "invoke_agent Weather")
    assert run_entry.content["agent_input"] == {"question": QUESTION}
    output = run_entry.content["agent_output"]
    assert output["answer"] == ANSWER and output["reasoning"] == "The tool said so."
    assert output["trajectory"]["tool_args_0"] == {"city": "Paris"}
    assert output["trajectory"]["observation_0"] == TOOL_OUTPUT
    tool_entry = next(s for s in in_session if s.name == "execute_tool get_weather")
    assert tool_entry.content["tool_arguments"] == {"city": "Paris"}
    assert tool_entry.content["tool_result"] == TOOL_OUTPUT
    recorded = oat.load_session(checkpoint_file).conversation()
    assert [m["role"] for m in recorded] == ["system", "user", "assistant"]  # the last model call's


def test_a_tool_error_is_on_its_span_and_the_run_goes_on(llm, memory_exporter):
    def get_weather(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    llm.queue(*REACT_SCRIPT)
    assert _run_react(llm.base_url, tools=[get_weather]).answer == ANSWER  # ReAct tells the model
    assert "Execution error in get_weather" in json.dumps(llm.requests[1]["body"]["messages"])
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name == "execute_tool get_weather"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "RuntimeError"
    (run,) = [s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent Weather"]
    assert run.status.status_code is StatusCode.UNSET


def test_a_failed_call_ends_its_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_error_400")
    with dspy.context(lm=_lm(llm.base_url)), pytest.raises(Exception) as raised:
        dspy.Predict("question -> answer")(question=QUESTION)
    (span,) = [s for s in memory_exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert span.name == "invoke_agent Predict"  # a string signature: DSPy's class names it
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == type(raised.value).__qualname__


class Capital(dspy.Signature):
    """Name a country's capital."""

    country: str = dspy.InputField()
    capital: str = dspy.OutputField()


@pytest.mark.parametrize("how", ["call", "acall"])
def test_predict_and_chain_of_thought_calls_are_agent_spans_too(how, llm, checkpoint, memory_exporter):
    llm.queue(_reply(1, {"capital": "Paris"}), _reply(2, {"reasoning": "Known.", "capital": "Berlin"}))
    predict, cot = dspy.Predict(Capital), dspy.ChainOfThought(Capital)
    with dspy.context(lm=_lm(llm.base_url)):
        if how == "acall":
            first = asyncio.run(predict.acall(country="France"))
            second = asyncio.run(cot.acall(country="Germany"))
        else:
            first, second = predict(country="France"), cot(country="Germany")
    assert (first.capital, second.capital) == ("Paris", "Berlin")
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    finished = memory_exporter.get_finished_spans()
    runs = [s for s in finished if s.name.startswith("invoke_agent")]
    # a Predict is named by its signature; a ChainOfThought rebuilds its signature (with
    # ``reasoning``) and keeps no name of the user's: DSPy's class names it
    assert [s.name for s in runs] == ["invoke_agent Capital", "invoke_agent ChainOfThought"]
    assert len({s.context.trace_id for s in runs}) == 2  # two calls, two traces
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert [c.parent.span_id for c in chats] == [r.context.span_id for r in runs]
    entries = [s for s in spans_of(checkpoint_file) if s.name.startswith("invoke_agent")]
    assert [e.content["agent_input"] for e in entries] == [{"country": "France"}, {"country": "Germany"}]
    assert [e.content["agent_output"] for e in entries] == [
        {"capital": "Paris"},
        {"reasoning": "Known.", "capital": "Berlin"},
    ]


def test_a_program_of_the_users_is_named_by_its_class_and_spans_once(llm, memory_exporter):
    class Forecaster(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.capital = dspy.Predict(Capital)
            self.react = _react()

        def forward(self, country: str) -> Any:
            city = self.capital(country=country).capital
            return self.react(question=f"What's the weather in {city}?")

    llm.queue(_reply(0, {"capital": "Paris"}), *REACT_SCRIPT)
    with dspy.context(lm=_lm(llm.base_url)):
        assert Forecaster()(country="France").answer == ANSWER
    finished = memory_exporter.get_finished_spans()
    (run,) = [s for s in finished if s.name.startswith("invoke_agent")]
    assert run.name == "invoke_agent Forecaster"
    under = [s for s in finished if s.parent is not None and s.parent.span_id == run.context.span_id]
    assert [s.name for s in under if not s.name.startswith("POST")] == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "execute_tool get_weather",
        "chat gpt-4o-mini",
        "execute_tool finish",
        "chat gpt-4o-mini",
    ]


def test_with_dspys_cache_on_a_cached_answer_makes_no_request_and_no_model_span(
    llm, tmp_path, memory_exporter
):
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(tmp_path))
    llm.queue(_reply(1, {"capital": "Paris"}))
    with dspy.context(lm=_lm(llm.base_url, cache=True)):
        answers = [dspy.Predict(Capital)(country="France").capital for _ in range(2)]
    assert answers == ["Paris", "Paris"] and len(llm.requests) == 1  # the second from DSPy's cache
    finished = memory_exporter.get_finished_spans()
    runs = [s for s in finished if s.name == "invoke_agent Capital"]
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert len(runs) == 2 and len(chats) == 1 and chats[0].parent.span_id == runs[0].context.span_id


@pytest.mark.parametrize("how", ["call", "acall"])
def test_a_react_run_replays_with_the_server_stopped_and_its_tools_answered(how, tmp_path, memory_exporter):
    calls: list[str] = []

    def get_weather(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return f"18°C and sunny in {city}"

    def run(base_url: str) -> Any:
        return _run_react(base_url, how, tools=[get_weather]).answer

    recorded, replayed, report, path = record_then_replay(tmp_path, REACT_SCRIPT, run)
    assert replayed == recorded == ANSWER
    assert calls == ["Paris"]  # run once, when recorded: the replay answered it from the recording
    assert report["answered"] == 3 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"] * 3
    replayed_tools = [
        s for s in memory_exporter.get_finished_spans()
        if s.name.startswith("execute_tool") and "agent_trace.replay.tool_result" in s.attributes
    ]  # fmt: skip
    assert sorted(s.name for s in replayed_tools) == ["execute_tool finish", "execute_tool get_weather"]


def _native_lm(base_url: str, **options: Any) -> Any:
    """DSPy's default LM: on DSPy 3.4 ``engine="auto"`` sends an OpenAI model's calls through its
    own HTTP client on plain sockets (``dspy.lm15``), not LiteLLM (before 3.4: LiteLLM)."""
    options = {"num_retries": 0, "cache": False, **options}
    return dspy.LM("openai/gpt-4o-mini", api_base=f"{base_url}/v1", api_key="sk-test", **options)


@pytest.mark.parametrize("how", ["call", "acall"])
def test_on_dspys_native_engine_each_model_call_is_a_model_span_under_the_run(
    how, llm, checkpoint, memory_exporter
):
    llm.queue(*REACT_SCRIPT)
    agent = _react()
    with dspy.context(lm=_native_lm(llm.base_url)):
        answer = asyncio.run(agent.acall(question=QUESTION)) if how == "acall" else agent(question=QUESTION)
    assert answer.answer == ANSWER and len(llm.requests) == 3
    shareable = next(p for p in checkpoint.files if "checkpoint" not in p.name)
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    assert tree(_model_view(spans_of(shareable))) == SHAPE
    finished = memory_exporter.get_finished_spans()
    (run,) = [s for s in finished if s.name == "invoke_agent Weather"]
    chats = [s for s in finished if s.name == "chat gpt-4o-mini"]
    assert all(c.parent.span_id == run.context.span_id for c in chats)
    assert [c.attributes["gen_ai.response.id"] for c in chats] == [
        "chatcmpl-dspy1",
        "chatcmpl-dspy2",
        "chatcmpl-dspy3",
    ]
    first = chats[0].attributes
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.provider.name"] == "openai"
    assert first["gen_ai.request.model"] == "gpt-4o-mini"
    assert first["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in chats] == [400, 500, 600]
    assert first["gen_ai.usage.output_tokens"] == 20
    assert first["gen_ai.response.finish_reasons"] == ("stop",)

    # the session: each call's request messages and answer, and a snapshot after each
    session = oat.load_session(checkpoint_file)
    entries = [s for s in session.spans if s.name == "chat gpt-4o-mini"]
    assert len(entries) == 3
    sent = llm.requests[1]["body"]["messages"]
    assert all(len(e.content["input_message_ids"]) == 2 for e in entries)
    assert all(len(e.content["output_message_ids"]) == 1 for e in entries)
    snapshots = session.snapshots
    assert [x["description"] for x in snapshots] == ["after chat gpt-4o-mini"] * 3
    second = snapshots[1]
    assert [m["role"] for m in second["agent_messages"]] == ["system", "user", "assistant"]
    assert second["agent_messages"][1]["content"] == sent[1]["content"]  # what the server got
    assert TOOL_OUTPUT in second["last_query"] and "I have it." in second["last_result"]
    assert second["model_info"]["model_id"] == "gpt-4o-mini-2024-07-18"
    assert [m["role"] for m in session.conversation()] == ["system", "user", "assistant"]
    assert ANSWER in session.conversation()[-1]["content"]
    # ... and none of their text in the shareable tier
    assert QUESTION in checkpoint_file.read_text() and ANSWER in checkpoint_file.read_text()
    assert QUESTION not in shareable.read_text() and "I look the weather up." not in shareable.read_text()


def test_one_model_span_per_call_on_either_engine(llm, memory_exporter):
    """A program whose predictors use the native engine and the LiteLLM engine: each call one
    ``chat`` span (the native engine's here, LiteLLM's by ``agent_trace_litellm``), none twice."""

    class TwoEngines(dspy.Module):
        def __init__(self, base_url: str) -> None:
            super().__init__()
            self.native = dspy.Predict(Capital)
            self.native.lm = _native_lm(base_url)
            self.litellm = dspy.Predict(Capital)
            self.litellm.lm = _lm(base_url)

        def forward(self, country: str) -> Any:
            return [self.native(country=country).capital, self.litellm(country=country).capital]

    llm.queue(_reply(1, {"capital": "Paris"}), _reply(2, {"capital": "Paris"}))
    assert TwoEngines(llm.base_url)(country="France") == ["Paris", "Paris"]
    assert len(llm.requests) == 2
    finished = memory_exporter.get_finished_spans()
    (run,) = [s for s in finished if s.name == "invoke_agent TwoEngines"]
    chats = [s for s in finished if s.name.startswith("chat")]
    assert [c.attributes["gen_ai.response.id"] for c in chats] == ["chatcmpl-dspy1", "chatcmpl-dspy2"]
    assert all(c.parent.span_id == run.context.span_id for c in chats)


def test_a_failed_native_call_is_its_model_span_with_the_error(llm, memory_exporter):
    llm.queue("openai_error_400")
    with dspy.context(lm=_native_lm(llm.base_url)), pytest.raises(Exception) as raised:
        dspy.Predict(Capital)(country="France")
    finished = memory_exporter.get_finished_spans()
    (run,) = [s for s in finished if s.name == "invoke_agent Capital"]
    (chat,) = [s for s in finished if s.name.startswith("chat")]
    assert chat.parent.span_id == run.context.span_id
    assert chat.status.status_code is StatusCode.ERROR and run.status.status_code is StatusCode.ERROR
    assert "error.type" in chat.attributes and str(raised.value)


def _streamed_reply(fields: dict[str, str]) -> dict[str, Any]:
    """The answer as OpenAI's chat completions API streams it (SSE chunks), usage last."""
    text = "".join(f"[[ ## {k} ## ]]\n{v}\n\n" for k, v in fields.items()) + "[[ ## completed ## ]]"
    base = {"id": "chatcmpl-dspys", "object": "chat.completion.chunk", "created": 1764400000}
    base["model"] = "gpt-4o-mini-2024-07-18"
    pieces = [text[i : i + 12] for i in range(0, len(text), 12)]
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append(
        {**base, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}
    )
    return {"status": 200, "sse": [{"data": c} for c in chunks] + [{"data": "[DONE]"}]}


@pytest.mark.parametrize("is_async", [False, True])  # the sync engine in a thread, the async engine
def test_a_streamed_native_call_is_one_model_span_with_the_whole_answer(
    is_async, llm, checkpoint, memory_exporter
):
    llm.queue(_streamed_reply({"capital": "Paris"}))
    program = dspy.streamify(dspy.Predict(Capital), is_async_program=is_async)

    async def run() -> list[Any]:
        return [value async for value in program(country="France")]

    with dspy.context(lm=_native_lm(llm.base_url)):
        values = asyncio.run(run())
    assert values[-1].capital == "Paris"
    assert llm.requests[0]["body"]["stream"] is True
    checkpoint_file = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    finished = memory_exporter.get_finished_spans()
    (run_span,) = [s for s in finished if s.name == "invoke_agent Capital"]
    (chat,) = [s for s in finished if s.name.startswith("chat")]
    assert chat.parent.span_id == run_span.context.span_id
    assert chat.attributes["gen_ai.request.stream"] is True
    assert chat.attributes["gen_ai.response.id"] == "chatcmpl-dspys"
    assert chat.attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 50
    assert chat.attributes["gen_ai.usage.output_tokens"] == 9
    assert "gen_ai.response.time_to_first_chunk" in chat.attributes
    (snapshot,) = oat.load_session(checkpoint_file).snapshots
    assert snapshot["last_result"] == "[[ ## capital ## ]]\nParis\n\n[[ ## completed ## ]]"  # all of it


@pytest.mark.parametrize("how", ["call", "acall"])
def test_on_dspys_native_engine_a_react_run_replays_with_the_server_stopped(how, tmp_path, memory_exporter):
    """The native engine's HTTP exchanges (lm15's own transport) are kept under its model spans
    and answered from them: the run again with no server, its tools answered from the recording."""
    calls: list[str] = []

    def get_weather(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return f"18°C and sunny in {city}"

    def run(base_url: str) -> Any:
        agent = _react([get_weather])
        with dspy.context(lm=_native_lm(base_url)):
            if how == "acall":
                return asyncio.run(agent.acall(question=QUESTION)).answer
            return agent(question=QUESTION).answer

    recorded, replayed, report, path = record_then_replay(tmp_path, REACT_SCRIPT, run)
    assert replayed == recorded == ANSWER
    assert calls == ["Paris"]
    assert report["answered"] == 3 and report["divergences"] == [] and report["unused"] == 0
    assert report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"] * 3


@pytest.mark.parametrize("is_async", [False, True])
def test_a_streamed_native_call_replays_its_recorded_stream(is_async, tmp_path):
    def run(base_url: str) -> Any:
        program = dspy.streamify(dspy.Predict(Capital), is_async_program=is_async)

        async def collect() -> list[Any]:
            return [value async for value in program(country="France")]

        with dspy.context(lm=_native_lm(base_url)):
            return asyncio.run(collect())[-1].capital

    script = (_streamed_reply({"capital": "Paris"}),)
    recorded, replayed, report, path = record_then_replay(tmp_path, script, run)
    assert recorded == replayed == "Paris"
    assert report["answered"] == 1 and report["divergences"] == [] and report["refused"] == []
    assert exchange_holders(path) == ["chat gpt-4o-mini"]


def test_on_dspys_native_engine_a_replay_refuses_another_host_and_reports_a_divergence(tmp_path):
    from otel_agent_trace.model_replay import ModelReplayDivergence, ModelReplayRefused, model_replay

    def run(base_url: str) -> Any:
        with dspy.context(lm=_native_lm(base_url)):
            return dspy.Predict(Capital)(country="France").capital

    recorded, replayed, _report, path = record_then_replay(tmp_path, (_reply(1, {"capital": "Paris"}),), run)
    assert recorded == replayed == "Paris"
    with model_replay(path) as player, pytest.raises(ModelReplayRefused):
        run("http://models.example.invalid")  # never talked to when recorded: not sent
    assert player.report()["refused"] == ["POST http://models.example.invalid/v1/chat/completions"]
    loopback = _native_lm("http://127.0.0.1:9")  # a loopback address: the recorded origin
    with model_replay(path) as player, pytest.raises(ModelReplayDivergence), dspy.context(lm=loopback):
        dspy.Predict(Capital)(country="Germany")  # another question: another request body
    (divergence,) = player.report()["divergences"]
    assert divergence["recorded_index"] == 1 and divergence["span_name"] == "chat gpt-4o-mini"


class Chat(dspy.Signature):
    """Answer weather questions."""

    question: str = dspy.InputField()
    history: History = dspy.InputField()
    answer: str = dspy.OutputField()


def test_the_recorded_calls_become_the_dspy_history_a_new_call_continues_with(llm, checkpoint):
    from otel_agent_trace.offline.resume.dspy_history import to_dspy_history

    llm.queue(_reply(1, {"answer": ANSWER}))
    with dspy.context(lm=_lm(llm.base_url)):
        dspy.Predict(Chat)(question=QUESTION, history=dspy.History(messages=[]))
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()

    history = to_dspy_history(oat.load_session(path), "Chat")  # (another process: only the file)
    assert history.messages == [{"question": QUESTION, "answer": ANSWER}]
    llm.reset()
    llm.queue(_reply(2, {"answer": "It will rain in Paris tomorrow."}))
    with dspy.context(lm=_lm(llm.base_url)):
        done = dspy.Predict(Chat)(question="And tomorrow?", history=history)
    assert done.answer == "It will rain in Paris tomorrow."
    sent = llm.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert QUESTION in sent[1]["content"] and ANSWER in sent[2]["content"]
    assert "And tomorrow?" in sent[3]["content"]
