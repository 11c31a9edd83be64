"""The SDK shortcuts in ``_internal/sdk_compat`` leave a span exactly as the SDK's own API would."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent_trace._internal.sdk_compat import set_attributes_fast

START = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "n": 1}
CASES = {
    "plain": {"gen_ai.response.id": "r1", "gen_ai.usage.input_tokens": 81, "t": 0.2, "ok": True},
    "str tuples and lists": {
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "agent_trace.tool_calls.ids": ("call_1", "call_2"),
        "agent_trace.tool_calls.names": ["a list", "of str"],
    },
    "a key set again moves to the end": {"gen_ai.operation.name": "chat", "x": 2},
    "values the SDK cleans or drops": {
        "mixed": ("a", 1),
        "none": None,
        "empty": (),
        "obj": object(),
        "ints": [1, 2],
        "bytes": b"raw",
        "fine": "kept",
    },
}


def _spans(limits: SpanLimits | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits) if limits else TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("t"), exporter


def _exported(setter, attributes, limits=None, *, end_first=False):
    tracer, exporter = _spans(limits)
    span = tracer.start_span("s", attributes=START)
    if end_first:
        span.end()
    setter(span, attributes)
    if not end_first:
        span.end()
    (finished,) = exporter.get_finished_spans()
    return list(finished.attributes.items()), finished.dropped_attributes


def _sdk(span, attributes):
    span.set_attributes(attributes)


def _fast_split(span, attributes):
    """As a caller of ours does: tuples apart, as ``str_tuples``."""
    tuples = {k: v for k, v in attributes.items() if type(v) is tuple}
    set_attributes_fast(span, {k: v for k, v in attributes.items() if k not in tuples}, tuples)


def _tuples_last(attributes):
    """The order ``_fast_split`` hands them on in."""
    return {**{k: v for k, v in attributes.items() if type(v) is not tuple}, **attributes}


@pytest.mark.parametrize("case", list(CASES))
def test_the_span_ends_as_set_attributes_leaves_it(case: str) -> None:
    attributes = CASES[case]
    assert _exported(set_attributes_fast, dict(attributes)) == _exported(_sdk, dict(attributes))
    assert _exported(_fast_split, dict(attributes)) == _exported(_sdk, _tuples_last(attributes))


@pytest.mark.parametrize(
    "limits",
    [
        SpanLimits(max_span_attributes=5),
        SpanLimits(max_attribute_length=3),
        SpanLimits(max_span_attributes=0),
    ],
    ids=["full", "value length", "none kept"],
)
def test_limits_are_the_sdk_s(limits: SpanLimits) -> None:
    attributes = {"gen_ai.response.id": "response-1", "a": "long text", "b": ("abcdef",), "c": 1}
    assert _exported(set_attributes_fast, dict(attributes), limits) == _exported(
        _sdk, dict(attributes), limits
    )


def test_an_ended_span_is_left_as_it_was(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        got = _exported(set_attributes_fast, {"late": 1}, end_first=True)
    assert got == (list(START.items()), 0)
    assert "ended span" in caplog.text  # the SDK's own warning


def test_a_span_of_another_sdk_gets_set_attributes() -> None:
    class Foreign:
        def __init__(self) -> None:
            self.got: dict = {}

        def set_attributes(self, attributes: dict) -> None:
            self.got.update(attributes)

    span = Foreign()
    set_attributes_fast(span, {"a": 1}, {"b": ("x",)})
    assert span.got == {"a": 1, "b": ("x",)}
