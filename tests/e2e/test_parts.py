"""One entry point runs every part; each part still switches off by its own name."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation.parts import PARTS, WAITS_FOR, load_part

from .helpers import DEMO_AGENT, load, only_session, run_instrumented


def test_one_entry_point_of_ours_and_every_part_loads():
    ours = [
        e for e in entry_points(group="opentelemetry_instrumentor") if e.value.startswith("otel_agent_trace")
    ]
    assert [e.name for e in ours] == ["agent_trace"]
    assert [load_part(name).__name__ for name in PARTS][:2] == ["CoreInstrumentor", "ContextInstrumentor"]


def test_each_library_part_waits_for_the_module_its_instrumentor_waits_for():
    """The entry point loads a library's part when that module is imported; the part itself
    patches when it is: the two names must be one, or a part would start too early or never."""
    waiting = {
        name: cls.library_module for name in PARTS if issubclass(cls := load_part(name), DeferredInstrumentor)
    }
    del waiting["agent_trace_litellm"]  # at once: it sets LiteLLM's environment before its import
    assert waiting == WAITS_FOR


def _demo(tmp_path, disabled: str):
    done = run_instrumented(DEMO_AGENT, tmp_path, {"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": disabled})
    assert done.returncode == 0, done.stderr
    return load(only_session(tmp_path / "agent-sessions"))


@pytest.mark.parametrize("disabled", ["", "agent_trace_files", "agent_trace_openai, agent_trace_http"])
def test_a_part_named_in_disabled_instrumentations_records_nothing(tmp_path, disabled):
    session = _demo(tmp_path, disabled)
    names = [s.name for s in session.spans]
    file_events = session.get_events_by_type("file.open")
    assert sum(n.startswith("execute_tool") for n in names) == 3  # the API's tool spans, always
    assert bool(file_events) == ("agent_trace_files" not in disabled)
    assert any(n.startswith("chat ") for n in names) == ("agent_trace_openai" not in disabled)
    # the HTTP part: its facts on the model span (one span per model call), or a span of its own
    # for a request outside a model call
    http_facts = any("http.response.status_code" in s.attributes for s in session.spans)
    assert http_facts == ("agent_trace_http" not in disabled)
