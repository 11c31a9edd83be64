"""The recorder's part of one model call, as ``instrumentation/_genai/model_call.py`` drives it
(``attach_content``, the automatic snapshot, the span's end; trace tier, no ZIP), for comparing
two versions exactly at 10 and 400 messages of 1 KB (docs/benchmarks/genai.md, "Flat in
history"). The history's message objects are kept across calls, as an agent loop keeps them;
each call adds a new user message and a tool-call answer. For N = 20 and N = 120::

    valgrind --tool=callgrind python benchmarks/bench_recorder_history.py ROOT HISTORY N

then (total at 120 - total at 20) / 100 is the instructions of one call (start-up cancels).
ROOT: the checkout to measure.
"""

from __future__ import annotations

import inspect
import sys
import tempfile
from pathlib import Path


def main() -> None:
    root, history, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sys.path.insert(0, root)
    from opentelemetry.sdk.trace import TracerProvider

    from otel_agent_trace._internal import sink
    from otel_agent_trace.recording import SessionRecorder, SessionSpanProcessor
    from otel_agent_trace.settings import Settings

    settings = Settings(directory=Path(tempfile.mkdtemp()), tiers=("trace",), write_zip=False)
    recorder = SessionRecorder(settings).start()
    provider = TracerProvider()
    provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
    sink.set_active(recorder)
    tracer = provider.get_tracer("bench")
    system = {"role": "system", "content": "You are a terse assistant. " * 4}
    conversation = [system]
    for i in range(history):
        text = (f"message {i} " + "lorem ipsum dolor sit amet " * 40)[:1024]
        conversation.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.provider.name": "openai",
    }
    model_info = {"type": "openai", "model_id": "gpt-4o-mini", "provider": "openai"}
    # As model_call.py passes them, where the tree's recorder takes them (older trees do not).
    takes_span_messages = "span_messages" in inspect.signature(recorder.snapshot).parameters
    for k in range(n):
        sent = [*conversation, {"role": "user", "content": f"What is the weather? ({k})"}]
        call = {"id": f"call_{k}", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        answer = [{"role": "assistant", "content": None, "tool_calls": [call]}]
        span = tracer.start_span("chat gpt-4o-mini", attributes=attributes)
        recorder.attach_content(
            span,
            {
                "input_messages": sent,
                "output_messages": answer,
                "system_instructions": system["content"],
                "tool_definitions": tools,
            },
        )
        recorder.snapshot(
            "after chat gpt-4o-mini",
            messages=sent + answer,
            system_prompt=system["content"],
            last_query=sent[-1]["content"],
            last_result=[],
            model_info=model_info,
            tools_loaded=["get_weather"],
            span=span,
            auto=True,
            **({"span_messages": (sent, answer)} if takes_span_messages else {}),
        )
        span.end()
    recorder.stop()


if __name__ == "__main__":
    main()
