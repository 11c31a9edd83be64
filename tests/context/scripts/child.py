"""A child agent process: records one tool span, and a thread's span under it."""

import os
import sys
import threading

import otel_agent_trace as oat

how = sys.argv[1]
print(f"{how} TRACEPARENT={os.environ.get('TRACEPARENT')}", flush=True)
with oat.tool(f"child-{how}"):
    t = threading.Thread(
        target=lambda: oat.tool(f"child-{how}-thread").__enter__().__exit__(None, None, None)
    )
    t.start()
    t.join()
