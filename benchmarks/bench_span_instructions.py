"""Instructions per span (exact, under valgrind), for comparing two versions side by side where
timings are too noisy (docs/benchmarks/span-cost.md). For N = 200 and N = 1200::

    valgrind --tool=callgrind python benchmarks/bench_span_instructions.py ROOT N TIER

then (total at 1200 - total at 200) / 1000 is the instructions of one span (start-up cancels).
ROOT: the checkout to measure (its ``benchmarks/`` gives the span's attributes); TIER: ``none``
(a bare SDK span), ``trace`` or ``checkpoint``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main() -> None:
    root, n, tier = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, root + "/benchmarks")
    import bench_span_cost as b
    from opentelemetry.sdk.trace import TracerProvider

    try:
        from otel_agent_trace.recording import SessionRecorder, SessionSpanProcessor
    except ImportError:  # a version from before the engine moved into the package
        from opentelemetry.exporter.agent_session import SessionRecorder, SessionSpanProcessor
    from otel_agent_trace._internal import sink
    from otel_agent_trace.settings import Settings

    provider = TracerProvider()
    if tier != "none":
        settings = Settings(directory=Path(tempfile.mkdtemp()), tiers=(tier,))
        recorder = SessionRecorder(settings).start()
        provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
        sink.set_active(recorder)
    tracer = provider.get_tracer("bench")
    for _ in range(n):
        with tracer.start_as_current_span("execute_tool read_file", attributes=b.ATTRIBUTES):
            pass
    os._exit(0)  # no exit handlers: only the spans are counted


if __name__ == "__main__":
    main()
