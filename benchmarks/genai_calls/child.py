"""One configuration measured in its own process: ``python child.py CONFIG URL MODE OPTIONS_JSON``.

Every configuration exports every span through the OTLP protobuf encoder
(``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans``) into a local file,
written and flushed as each span ends (``SimpleSpanProcessor``), so the export is inside the
timed call. Ours is set up as ``opentelemetry-instrument`` sets it up (``initialize()``: our
distro, configurator and every installed instrumentor; the session file is written), with the
OTLP file exporter added to its provider.

Blocks of calls alternate with the instrumentation's patches switched off and on
(:class:`PatchSwitch`, the same for every package); the overhead is the median over block pairs
of (median on − median off). Prints one JSON line. ``"client": "bedrock"`` in the options
measures a boto3 ``bedrock-runtime`` client's ``converse`` / ``converse_stream`` instead of
``openai``'s chat completions; ``ollama``, ``ollama-generate``, ``ollama-embed``, ``mistral``,
``litellm`` and ``gemini-afc`` the other clients (see :func:`_client`).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from switch import PatchSwitch  # noqa: E402

MODEL = "gpt-4o-mini"


class OTLPFileExporter:
    """Encodes each batch as an OTLP ``ExportTraceServiceRequest`` and appends it to a file."""

    def __init__(self, path: str) -> None:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        self._encode = encode_spans
        self._file = open(path, "ab")  # noqa: SIM115
        self.spans = 0
        self.bytes = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        data = self._encode(spans).SerializeToString()
        self._file.write(len(data).to_bytes(4, "big") + data)
        self._file.flush()
        self.spans += len(spans)
        self.bytes += len(data)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._file.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _exporter_processor(exporter: OTLPFileExporter) -> Any:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    return SimpleSpanProcessor(exporter)  # type: ignore[arg-type]


def _messages(history: int, size: int, shape: str = "text") -> list[Any]:
    """A system prompt, ``history`` messages of ``size`` characters, and a user question. The
    history's objects are kept across calls, as an agent loop keeps them. ``shape``: ``"text"``,
    user and assistant dicts in turn; ``"agent"``, a tool-calling loop as agents keep it — a user
    dict, the SDK's own assistant message asking for a tool (``response.choices[0].message``
    appended as it is), the tool's result, the SDK's assistant answer — in turn; ``"window"``, the
    agent shape in a sliding window (see ``_window``)."""
    system = {"role": "system", "content": "You are a terse assistant. " * 4}
    return [system, *(_message(i, size, shape) for i in range(history))]


def _message(i: int, size: int, shape: str) -> Any:
    """Message ``i`` of a history of ``shape`` (see ``_messages``)."""
    text = (f"message {i} " + "lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    if shape == "text":
        return {"role": "user" if i % 2 == 0 else "assistant", "content": text}
    from openai.types.chat import ChatCompletionMessage

    turn = i % 4
    if turn == 0:
        return {"role": "user", "content": text}
    if turn == 1:
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        }
        return ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [call]})
    if turn == 2:
        return {"role": "tool", "tool_call_id": f"call_{i - 1}", "content": text}
    return ChatCompletionMessage(role="assistant", content=text)


def _window(conv: list[Any], history: int, size: int, n: int) -> list[Any]:
    """The ``n``-th call's history of the ``"window"`` shape: the system prompt and the latest
    ``history`` messages of a tool-calling loop that gains a turn (four messages, new objects) per
    call and drops its oldest one. ``conv`` (the system prompt, then every message made so far) is
    extended as needed."""
    start = 1 + 4 * n
    while len(conv) < start + history:
        conv.append(_message(len(conv) - 1, size, "agent"))
    return [conv[0], *conv[start : start + history]]


def _dir_bytes(path: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            if not name.endswith((".zip", ".tmp")):
                total += os.path.getsize(os.path.join(root, name))
    return total


def setup(config: str, work: str) -> tuple[Any, OTLPFileExporter, Any]:
    """The instrumentation of ``config`` on a provider exporting to an OTLP file; returns
    (tracer provider, exporter, the "bare span" tracer or None)."""
    exporter = OTLPFileExporter(os.path.join(work, "spans.otlp"))
    if config.startswith("ours"):
        from opentelemetry import trace
        from opentelemetry.instrumentation.auto_instrumentation import initialize

        initialize()  # what opentelemetry-instrument does: distro, configurator, instrumentors
        provider: Any = trace.get_tracer_provider()  # the SDK's, set by our configurator
        provider.add_span_processor(_exporter_processor(exporter))
        return provider, exporter, None
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider()
    provider.add_span_processor(_exporter_processor(exporter))
    trace.set_tracer_provider(provider)
    if config == "bare":
        return provider, exporter, provider.get_tracer("bench")
    if config.startswith("floor"):
        import floor

        floor.install(provider, os.path.join(work, "floor.jsonl") if config == "floor" else None)
        return provider, exporter, None
    if config.startswith("contrib"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    elif config == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    elif config == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    elif config == "openinference-litellm":
        from openinference.instrumentation.litellm import LiteLLMInstrumentor

        LiteLLMInstrumentor().instrument(tracer_provider=provider)
        return provider, exporter, None
    else:
        return provider, exporter, None
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    return provider, exporter, None


def main() -> None:
    config, url, mode, raw = sys.argv[1:5]
    opts = json.loads(raw)
    work = opts["work"]
    client = _client(opts.get("client", "openai"), url)
    _one(client, [{"role": "user", "content": "warm"}], [], False)
    switch = PatchSwitch()  # after a first call: openai imports its resources lazily
    provider, exporter, bare = setup(config, work)
    _one(client, [{"role": "user", "content": "warm"}], [], False)
    patched = switch.capture()
    stream = mode == "stream"
    histories = opts.get("histories") or [0]
    size, shape = opts.get("size", 1024), opts.get("shape", "text")
    window = shape == "window"
    convs = {h: _messages(0 if window else h, size, shape) for h in histories}
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
    state = {"on": False, "n": 0}
    from opentelemetry.trace import SpanKind

    client_kind = SpanKind.CLIENT

    def call(history: int) -> int:
        state["n"] += 1
        conv = convs[history]
        if window:
            conv = _window(conv, history, size, state["n"])
        messages = conv + [{"role": "user", "content": f"What is the weather? ({state['n']})"}]
        t0 = time.perf_counter_ns()
        if bare is not None and state["on"]:
            with bare.start_as_current_span(
                f"chat {MODEL}",
                kind=client_kind,
                attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL},
            ):
                _one(client, messages, tools, stream)
        else:
            _one(client, messages, tools, stream)
        provider.force_flush()
        return time.perf_counter_ns() - t0

    def on(flag: bool) -> None:
        state["on"] = flag
        (switch.on if flag else switch.off)()

    block, pairs, warmup = opts["block"], opts["pairs"], opts["warmup"]
    result: dict[str, Any] = {"patched": patched}
    if opts.get("count") is not None:  # bench_call_instructions: N calls, patches on, no timing
        history = histories[0]
        on(True)
        for _ in range(warmup):
            call(history)
        spans, span_bytes = exporter.spans, exporter.bytes
        _handshake(opts, "ready")  # (the driver may act here: all of the process is counted)
        for _ in range(opts["count"]):
            call(history)
        time.sleep(0.3)  # let a flusher thread write what it queued
        _handshake(opts, "done")  # ... and off
        result["spans"], result["span_bytes"] = exporter.spans - spans, exporter.bytes - span_bytes
        print(json.dumps(result))
        return
    for history in histories:
        on(True)
        for _ in range(warmup):
            call(history)
        on(False)
        for _ in range(warmup):
            call(history)
        diffs, on_all, off_all = [], [], []
        blocks: list[tuple[float, float]] = []  # (median off, median on) of each pair
        spans = span_bytes = 0
        session0 = _dir_bytes(opts["session_dir"]) if opts.get("session_dir") else 0
        for p in range(pairs):
            order = (False, True) if p % 2 == 0 else (True, False)  # ABBA against drift
            medians = {}
            for flag in order:
                on(flag)
                s0, b0 = exporter.spans, exporter.bytes
                times = [call(history) for _ in range(block)]
                if flag:
                    spans += exporter.spans - s0
                    span_bytes += exporter.bytes - b0
                    on_all += times
                else:
                    off_all += times
                medians[flag] = statistics.median(times)
            diffs.append((medians[True] - medians[False]) / 1000)
            blocks.append((medians[False] / 1000, medians[True] / 1000))
        on(False)
        calls = pairs * block
        time.sleep(0.3)  # let a flusher thread write what it queued
        session = (_dir_bytes(opts["session_dir"]) - session0) if opts.get("session_dir") else 0
        result[str(history)] = {
            "overhead_us": statistics.median(diffs),
            "on_us": statistics.median(on_all) / 1000,
            "off_us": statistics.median(off_all) / 1000,
            "spans_per_call": spans / calls,
            "span_bytes_per_call": span_bytes / calls,
            "session_bytes_per_call": session / calls,
            "blocks": blocks,
        }
    print(json.dumps(result))
    sys.stdout.flush()


def _handshake(opts: dict[str, Any], step: str) -> None:
    """Tell the driver ``step`` (a file in the work directory) and wait until it answers (its
    file ``step + ".ok"``): polled with short sleeps."""
    work = opts["work"]
    Path(work, step).write_text(str(os.getpid()))
    answer = Path(work, step + ".ok")
    while not answer.exists():
        time.sleep(0.005)


_KIND = {"client": "openai"}  # the client measured (``--client``)


def _client(kind: str, url: str) -> Any:
    """The client measured: ``openai`` (``url`` is the stub's ``/v1``), a boto3
    ``bedrock-runtime`` client (``--client bedrock``: the stub's Bedrock paths), ``ollama``'s
    (``/api/chat``; ``ollama-generate``: ``/api/generate``; ``ollama-embed``: ``/api/embed``),
    ``mistralai``'s, LiteLLM calling the OpenAI API (the stub's chat answer), or google-genai's
    (``gemini-afc``: ``generate_content`` with a Python function as its tool, which the SDK calls
    itself and answers in a second request: two rounds in one call)."""
    _KIND["client"], _KIND["url"] = kind, url
    base = url.removesuffix("/v1")
    if kind == "gemini-afc":
        import importlib

        genai = importlib.import_module("google.genai")  # (in its own virtualenv)
        types = importlib.import_module("google.genai.types")
        return genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=base))
    if kind.startswith("ollama"):
        import ollama

        return ollama.Client(host=base)
    if kind == "mistral":
        from mistralai.client import Mistral

        return Mistral(api_key="bench", server_url=base)
    if kind == "litellm":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        return litellm
    if kind == "bedrock":
        import boto3
        from botocore.config import Config

        return boto3.client(
            "bedrock-runtime",
            endpoint_url=url.removesuffix("/v1"),
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
        )
    import httpx2  # noqa: F401  (imported before the switch notes the originals)
    import openai

    return openai.OpenAI(base_url=url, api_key="sk-bench", max_retries=0)


def _one_bedrock(client: Any, messages: list[Any], tools: list[Any], stream: bool) -> None:
    """The same call through Bedrock's Converse: the chat messages as Converse messages, the
    system prompt apart, the tools as ``toolSpec``s."""
    system = [{"text": m["content"]} for m in messages if m["role"] == "system"]
    turns = [
        {"role": m["role"], "content": [{"text": m["content"]}]} for m in messages if m["role"] != "system"
    ]
    request: dict[str, Any] = {"modelId": MODEL, "messages": turns, "inferenceConfig": {"temperature": 0.2}}
    if system:
        request["system"] = system
    if tools:
        specs = [
            {
                "toolSpec": {
                    "name": f["name"],
                    "description": f["description"],
                    "inputSchema": {"json": f["parameters"]},
                }
            }
            for f in (t["function"] for t in tools)
        ]
        request["toolConfig"] = {"tools": specs}
    if stream:
        for _ in client.converse_stream(**request)["stream"]:
            pass
    else:
        client.converse(**request)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny, 18°C in {city}"


get_weather.__annotations__ = {"city": str, "return": str}  # (this module's annotations are strings)


def _one_gemini(client: Any, messages: list[Any], stream: bool) -> None:
    """google-genai's ``generate_content`` with automatic function calling: the system prompt as
    the system instruction, the turns as contents, ``get_weather`` as the tool (called by the SDK)."""
    import importlib

    types = importlib.import_module("google.genai.types")
    system = "\n".join(m["content"] for m in messages if m["role"] == "system") or None
    contents = [
        types.Content(
            role="model" if m["role"] == "assistant" else "user", parts=[types.Part(text=m["content"])]
        )
        for m in messages
        if m["role"] != "system"
    ]
    config = types.GenerateContentConfig(system_instruction=system, tools=[get_weather], temperature=0.2)
    if stream:
        for _ in client.models.generate_content_stream(model=MODEL, contents=contents, config=config):
            pass
    else:
        client.models.generate_content(model=MODEL, contents=contents, config=config)


def _one_other(client: Any, messages: list[Any], tools: list[Any], stream: bool) -> None:
    """The same call through ollama, mistralai or LiteLLM (their chat messages are OpenAI's);
    ``ollama-generate``: the system prompt and the question as ``generate``'s ``system`` and
    ``prompt``; ``ollama-embed``: the question embedded (never streamed)."""
    kind = _KIND["client"]
    if kind == "gemini-afc":
        return _one_gemini(client, messages, stream)
    if kind == "ollama-embed":
        client.embed(MODEL, input=[messages[-1]["content"]])
        return None
    if kind == "ollama-generate":
        system = "\n".join(m["content"] for m in messages if m["role"] == "system") or None
        options = {"temperature": 0.2}
        answer = client.generate(
            MODEL, messages[-1]["content"], system=system, stream=stream, options=options
        )
    elif kind == "ollama":
        answer = client.chat(MODEL, messages, tools=tools, stream=stream, options={"temperature": 0.2})
    elif kind == "mistral":
        call = client.chat.stream if stream else client.chat.complete
        answer = call(model=MODEL, messages=messages, tools=tools or None, temperature=0.2)
    else:
        answer = client.completion(
            model=f"openai/{MODEL}", messages=messages, tools=tools or None, stream=stream,
            api_base=_KIND["url"], api_key="sk-bench", temperature=0.2, max_retries=0,
        )  # fmt: skip
    if stream:
        for _ in answer:
            pass
    return None


def _one(client: Any, messages: list[Any], tools: list[Any], stream: bool) -> None:
    if _KIND["client"] == "bedrock":
        _one_bedrock(client, messages, tools, stream)
    elif _KIND["client"] != "openai":
        _one_other(client, messages, tools, stream)
    elif stream:
        for _ in client.chat.completions.create(model=MODEL, messages=messages, tools=tools, stream=True):
            pass
    else:
        client.chat.completions.create(model=MODEL, messages=messages, tools=tools, temperature=0.2)


if __name__ == "__main__":
    main()
