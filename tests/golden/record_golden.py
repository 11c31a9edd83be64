"""A small agent recorded with every source of variation fixed (ids, clocks, host, session id):
run twice, it must write the same bytes. ``python -m tests.golden.record_golden DIR``."""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry import trace

import otel_agent_trace as oat
from otel_agent_trace import testing
from otel_agent_trace._internal import sink
from otel_agent_trace.settings import Settings


@oat.tool
def read_file(path: str) -> str:
    """Read a (pretend) file."""
    return f"contents of {path}: def retry(): ..."


@oat.tool
def run_tests(target: str) -> dict:
    """Run the (pretend) tests."""
    return {"passed": 3, "failed": 0, "target": target}


def model_call(tracer: trace.Tracer, messages: list[dict], answer: dict) -> None:
    """A model call as the model instrumentations record one: request and response attributes,
    the messages as content, a tool-call event and an automatic snapshot of the turn."""
    with tracer.start_as_current_span(
        "chat golden-model",
        kind=trace.SpanKind.CLIENT,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "golden-model"},
    ) as span:
        with oat.tool("lookup", arguments={"topic": "backoff"}) as call:  # a child: the start is written
            call.set_result("use exponential backoff")
        span.set_attribute("gen_ai.usage.input_tokens", 10 * len(messages))
        span.add_event("gen_ai.tool.call", {"gen_ai.tool.name": "run_tests"})
        recorder = sink.active()
        recorder.attach_content(span, {"input_messages": list(messages), "output_messages": [answer]})
        recorder.snapshot(
            f"after turn {len(messages)}",
            messages=[*messages, answer],
            system_prompt=messages[0]["content"],
            last_query=messages[1]["content"],
            model_info={"type": "golden", "model_id": "golden-model"},
            span=span,
            auto=True,
        )
    messages.append(answer)


def main(directory: Path, tier: str) -> None:
    clock = testing.StepClock()
    messages = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the retry loop in retry.py"},
    ]
    settings = Settings(directory=directory, flush_ms=0)
    with testing.deterministic(clock) as provider:
        session = oat.session(
            "golden", settings=settings, tier=tier, environment=testing.fixed_environment(clock)
        )
        session.start()
        with oat.agent("coder"):
            read_file("retry.py")
            messages.append({"role": "assistant", "content": "The loop never sleeps; adding backoff."})
            oat.record_message("assistant", messages[-1]["content"])
            run_tests("tests/test_retry.py")
            oat.snapshot("after the fix", messages=messages, system_prompt=messages[0]["content"])
            # A conversation that grows over model calls (snapshots and message ids by reference).
            tracer = provider.get_tracer("golden")
            for turn in range(6):
                messages.append({"role": "user", "content": f"Step {turn}: and the next one?"})
                model_call(tracer, messages, {"role": "assistant", "content": f"Done step {turn}."})
        session.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "trace")
