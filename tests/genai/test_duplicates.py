"""Another instrumentation of the same SDK (e.g. opentelemetry-instrumentation-openai-v2) never
doubles the model spans, whichever was installed first.

The peer here is built the way contrib's openai-v2 wraps the SDK (``wrapt`` around
``Completions.create``, a CLIENT ``chat`` span). The benchmark runs the real peers side by side
with ours in a separate virtualenv (docs/benchmarks/genai.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import wrapt
from opentelemetry import trace
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.trace import SpanKind

from otel_agent_trace.instrumentation.openai import OpenAIInstrumentor
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import entries, model_spans

USER = [{"role": "user", "content": "Hi there"}]
PEER_SCOPE = "peer.openai"


def _peer_wrapper(wrapped, instance, args, kwargs):
    tracer = trace.get_tracer(PEER_SCOPE)
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": kwargs["model"],
    }
    with tracer.start_as_current_span(f"chat {kwargs['model']}", kind=SpanKind.CLIENT, attributes=attrs):
        return wrapped(*args, **kwargs)


def _peer_on() -> None:
    wrapt.wrap_function_wrapper("openai.resources.chat.completions", "Completions.create", _peer_wrapper)


def _peer_off() -> None:
    import openai.resources.chat.completions as module

    unwrap(module.Completions, "create")


@pytest.fixture
def peer_after_us() -> Iterator[None]:
    _peer_on()  # ours is on already (package fixture): the peer wraps around it
    yield
    _peer_off()


@pytest.fixture
def peer_before_us() -> Iterator[OpenAIInstrumentor]:
    ours = OpenAIInstrumentor()
    ours.uninstrument()
    _peer_on()
    ours.instrument()  # ours wraps around the peer's wrapper
    yield ours
    ours.uninstrument()
    _peer_off()
    ours.instrument()


def test_peer_outside_ours_one_span_and_we_adopt_it(
    openai_client, peer_after_us, checkpoint, memory_exporter
):
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    path = next(p for p in checkpoint.files if "checkpoint" in p.name)
    checkpoint.stop()
    (span,) = model_spans(memory_exporter)
    assert span.instrumentation_scope.name == PEER_SCOPE
    # our content and snapshot went onto the peer's span: the session still rebuilds the turn
    end = next(e for e in entries(path) if e["type"] == "span.end" and e["name"] == "chat gpt-4o-mini")
    assert len(end["content"]["input_message_ids"]) == 1
    session = load_session(path)
    assert [m["content"] for m in session.conversation()] == ["Hi there", "Hello! How can I help you today?"]
    assert len(session.snapshots) == 1


def test_peer_inside_ours_one_span_ours(openai_client, peer_before_us, memory_exporter):
    assert peer_before_us.foreign == ["openai.resources.chat.completions.Completions.create"]
    resp = openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert resp.id == "chatcmpl-text001"
    (span,) = model_spans(memory_exporter)
    assert span.instrumentation_scope.name == "otel_agent_trace"
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-text001"


def test_uninstrument_restores_the_sdk(openai_client, memory_exporter):
    import openai.resources.chat.completions as module

    ours = OpenAIInstrumentor()
    ours.uninstrument()
    try:
        assert not isinstance(module.Completions.__dict__["create"], wrapt.FunctionWrapper)
        openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
        assert model_spans(memory_exporter) == []
    finally:
        ours.instrument()
    openai_client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert len(model_spans(memory_exporter)) == 1
