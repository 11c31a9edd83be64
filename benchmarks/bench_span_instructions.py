"""Instructions per span (exact, under valgrind): run as
``valgrind --tool=callgrind python benchmarks/bench_span_instructions.py . N TIER`` for N = 200 and
N = 1200 and take the difference of the two totals / 1000 (start-up cancels). TIER: none, trace,
checkpoint. Used to compare two versions side by side where timings are too noisy
(docs/benchmarks/span-cost.md)."""

import os
import sys
import tempfile
from pathlib import Path

root, n, tier = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root + "/benchmarks")
import bench_span_cost as b
from opentelemetry.sdk.trace import TracerProvider

try:
    from otel_agent_trace.recording import SessionRecorder, SessionSpanProcessor
except ImportError:
    from opentelemetry.exporter.agent_session import SessionRecorder, SessionSpanProcessor
from otel_agent_trace._internal import sink
from otel_agent_trace.settings import Settings

d = Path(tempfile.mkdtemp())
provider = TracerProvider()
if tier != "none":
    settings = Settings(directory=d, tiers=(tier,))
    rec = SessionRecorder(settings).start()
    provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
    sink.set_active(rec)
tracer = provider.get_tracer("x")
for _ in range(n):
    with tracer.start_as_current_span("execute_tool read_file", attributes=b.ATTRIBUTES):
        pass
os._exit(0)  # no exit handlers: only the spans are counted
