"""Under ``opentelemetry-instrument`` with no tracing code: each OpenAI Agents SDK run (plain,
then streamed) is one trace, one ``invoke_agent`` tree with the handoff nested, in one session."""

from __future__ import annotations

from pathlib import Path

from tests.context.helpers import spans_of, tree
from tests.e2e.helpers import only_session, run_instrumented

AGENT = Path(__file__).parent / "agents" / "agents_sdk_handoff.py"
RUN = (
    "invoke_agent triage",
    [
        ("chat gpt-4o-mini", []),
        (
            "invoke_agent weather",
            [("chat gpt-4o-mini", []), ("execute_tool get_weather", []), ("chat gpt-4o-mini", [])],
        ),
    ],
)


def test_agents_sdk_runs_without_code(tmp_path, llm):
    llm.queue("openai_chat_handoff", "openai_chat_tool_call", "openai_chat_final")
    llm.queue("openai_chat_handoff_stream", "openai_chat_tool_call_stream", "openai_chat_final_stream")
    done = run_instrumented(
        AGENT,
        tmp_path,
        {"AGENT_TRACE_DIR": "sessions", "OPENAI_BASE_URL": llm.openai_url},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["It is 18°C and sunny in Paris."] * 2
    path = only_session(tmp_path / "sessions")
    spans = [s for s in spans_of(path) if s.name.startswith(("invoke_agent", "chat", "execute_tool"))]
    assert tree(spans) == [RUN, RUN]
    runs = [s for s in spans if s.name == "invoke_agent triage"]
    assert len({s.trace_id for s in spans}) == len(runs) == 2  # one trace per run
