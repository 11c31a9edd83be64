"""The agent frameworks of issue 36 (Pydantic AI, smolagents, LlamaIndex, AutoGen, CrewAI, Google
ADK), each a real example agent on its own OpenAI client, recorded under the real
``opentelemetry-instrument`` against the local model server, then model-replayed with that server
stopped: the same tool calls (the model's ids) and answer, every exchange answered, no divergence;
a changed prompt is reported at the first call. The recording itself is one tree in one trace,
with the session id on every span. Each framework runs where it is installed (the main test
environment or a virtualenv of tests/services/); elsewhere its cases are skipped."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.context.helpers import spans_of, tree

from .conftest import EXAMPLES, SCRIPTS, agent_output, record, replay

# name -> (module, example, the server's script: a key of SCRIPTS)
AGENTS = {
    "pydantic-ai": ("pydantic_ai", EXAMPLES / "pydantic_ai_weather.py", "openai"),
    "smolagents": ("smolagents", EXAMPLES / "smolagents_weather.py", "smolagents"),
    # needs openai < 3: in the virtualenv of tests/services/frameworks2.py
    "llamaindex": ("llama_index.llms.openai", EXAMPLES / "llamaindex_weather.py", "openai"),
    "autogen": ("autogen_ext.models.openai", EXAMPLES / "autogen_weather.py", "openai"),
    # in a virtualenv of its own: tests/services/crewai_venv.py
    "crewai": ("crewai", EXAMPLES / "crewai_weather.py", "openai"),
    # in a virtualenv of its own: tests/services/adk_venv.py
    "google-adk": ("google.adk", EXAMPLES / "adk_weather.py", "openai"),
}
NOT_STREAMED = {"crewai"}  # a crew's answers are not streamed
# a ToolCallingAgent answers through its final_answer tool
SCRIPTS.setdefault(("smolagents", False), ("openai_chat_tool_call", "openai_chat_final_answer_tool"))
SCRIPTS.setdefault(
    ("smolagents", True), ("openai_chat_tool_call_stream", "openai_chat_final_answer_tool_stream")
)
TOOLS = {"smolagents": ["execute_tool final_answer"]}
RUNS = [
    (name, stream) for name in AGENTS for stream in (False, True) if not (stream and name in NOT_STREAMED)
]
STEPS = [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])]


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # its parent package is missing
        return True


@pytest.fixture(scope="module", params=RUNS, ids=lambda p: f"{p[0]}-{'stream' if p[1] else 'plain'}")
def recorded(request, tmp_path_factory):
    name, stream = request.param
    module, script, server = AGENTS[name]
    if _missing(module):
        pytest.skip(f"{module} is not installed in this environment")
    cwd = tmp_path_factory.mktemp(f"{name}-{'stream' if stream else 'plain'}")
    return record(script, cwd, *(["--stream"] if stream else []), stream=stream, provider=server)


def test_the_recording_is_one_agent_tree_in_one_trace(recorded):
    spans = spans_of(recorded.session)
    genai = [s for s in spans if s.name.startswith(("invoke_agent", "chat", "execute_tool"))]
    spans = [s for s in spans if not s.name.startswith("create_agent")]  # AutoGen's, at construction
    extra = [(name, []) for name in TOOLS.get(recorded.provider, [])]
    expected = [("invoke_agent weather", STEPS + extra)]
    if recorded.script.name == "crewai_weather.py":
        genai = [s for s in spans if s.name.startswith(("invoke_", "chat", "execute_tool"))]
        expected = [("invoke_workflow crew", expected)]
    if recorded.script.name == "adk_weather.py":  # ADK's own spans; its model span is adopted
        genai = [s for s in spans if s.name.startswith(("invoke_", "generate_content", "execute_tool"))]
        steps = [(name.replace("chat", "generate_content"), kids) for name, kids in STEPS]
        expected = [("invoke_workflow weather", [("invoke_agent weather", steps)])]
    assert tree(genai) == expected  # (the system layer's spans left out)
    assert len({s.trace_id for s in spans}) == 1
    assert len({s.attributes["agent_trace.session.id"] for s in spans}) == 1
    (tool,) = [s for s in spans if s.name == "execute_tool get_weather"]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_weather_1"


def test_the_replay_reproduces_the_run_with_the_server_stopped(recorded):
    done, report = replay(recorded)
    assert done.returncode == 0, done.stderr
    assert agent_output(done) == recorded.output
    out = json.loads(recorded.output)
    assert out["tool_calls"] == [
        {"id": "call_weather_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    assert out["answer"] == "It is 18°C and sunny in Paris."
    assert report["divergences"] == [] and report["refused"] == []
    assert [c["status"] for c in report["calls"]] == ["replayed", "replayed"]
    assert report["answered"] == report["recorded_exchanges"] == 2 and report["unused"] == 0


def test_a_changed_prompt_is_reported_at_the_first_call(recorded):
    changed = ("--prompt", "You answer weather questions in French. Use the tools.", *recorded.args)
    done, report = replay(recorded, agent_args=changed)
    assert done.returncode != 0
    (first,) = report["divergences"]
    assert first["call"] == 1
    assert any("in French" in d for d in first["differences"]), first["differences"]
