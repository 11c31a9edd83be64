"""A bare agent loop: model calls and tool calls with no enclosing agent span (one trace each).

The "model" is scripted (no network); it is traced like an instrumented LLM client would be.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import SpanKind

import otel_agent_trace as oat

tracer = trace.get_tracer("bare-loop")


@oat.tool
def lookup(key: str) -> str:
    return {"a": "alpha", "b": "beta"}.get(key, "?")


def scripted_model(step: int) -> str | None:
    with tracer.start_as_current_span(
        "chat scripted-model",
        kind=SpanKind.CLIENT,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": "scripted-model",
        },
    ):
        return ["a", "b", None][step]


def main() -> None:
    results = []
    for step in range(3):
        key = scripted_model(step)
        if key is None:
            break
        results.append(lookup(key))
    print(",".join(results))


if __name__ == "__main__":
    main()
