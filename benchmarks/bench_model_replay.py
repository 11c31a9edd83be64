"""Model replay: how much faster a replayed run is than the recorded one, and what the replay
machinery costs per call.

1. **Recorded vs replayed run.** A 20-call agent on the bare OpenAI SDK (``openai`` 3.x,
   ``httpx2``) runs under ``opentelemetry-instrument`` in the checkpoint tier against the local
   fake model server made to answer each call after ``--latency-ms`` (200); then
   ``otel-agent-trace replay SESSION --model-replay -- python agent.py`` runs it again with the
   server stopped. The agent times its own 20 calls (interpreter start-up not counted).
2. **Machinery per call.** In one process, side by side, alternating rounds: the same 20
   requests made by the OpenAI client (a) over ``httpx2.MockTransport`` handing back the recorded
   bytes (no network, no replay) and (b) through the model replay (the transport hook, matching
   each request with the recording, building the recorded response). (b) − (a) per call is what
   the replay adds; and the player alone (match the request, build and stream the recorded
   response), fastest pass. On a shared machine the paired and fastest figures are the ones to read.

    python benchmarks/bench_model_replay.py
    python benchmarks/bench_model_replay.py --calls 20 --latency-ms 200 --rounds 30
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

AGENT = """
import json, os, sys, time
import openai

calls = int(sys.argv[1])
client = openai.OpenAI(api_key="sk-bench", max_retries=0)
messages = [{"role": "system", "content": "You count."}, {"role": "user", "content": "Count."}]
started = time.perf_counter()
for i in range(calls):
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    messages.append({"role": "assistant", "content": reply.choices[0].message.content})
    messages.append({"role": "user", "content": f"And {i}?"})
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def _instrument() -> str:
    return str(Path(sys.executable).parent / "opentelemetry-instrument")


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env.update({"PYTHONPATH": str(REPO), **extra})
    return env


def record_and_replay(work: Path, calls: int, latency_ms: int) -> dict[str, float]:
    from tests.fakes.llm_server import FakeLLMServer

    agent = work / "agent.py"
    agent.write_text(AGENT)
    server = FakeLLMServer(keep_alive_streams=True).start()
    serve = server.next_recording

    def slow(path, body):  # type: ignore[no-untyped-def]
        time.sleep(latency_ms / 1000)
        return serve(path, body)

    server.next_recording = slow  # type: ignore[method-assign]
    try:
        env = _env({"OPENAI_BASE_URL": server.openai_url, "AGENT_TRACE_TIER": "checkpoint"})
        done = subprocess.run(
            [_instrument(), sys.executable, str(agent), str(calls)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        recorded = json.loads(done.stdout)["seconds"]
    finally:
        server.stop()
    (session,) = (work / "agent-sessions").glob("*.checkpoint.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "otel_agent_trace.cli.main", "replay", str(session), "--model-replay", "--",
         sys.executable, str(agent), str(calls)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"replay failed:\n{done.stdout}\n{done.stderr}")
    replayed = json.loads(done.stdout.splitlines()[0])["seconds"]
    return {"session": str(session), "recorded_s": recorded, "replayed_s": replayed}


def machinery(session: str, calls: int, rounds: int) -> dict[str, float]:
    """Per call: the replay vs a mock transport answering the same bytes, alternating rounds."""
    import httpx2
    import openai

    from otel_agent_trace.model_replay import load_recording, start, stop

    recording = load_recording(session)
    base_url = recording.exchanges[0].url.rsplit("/chat/completions", 1)[0]
    bodies = [b"".join(x.chunks) for x in recording.exchanges]
    headers = recording.exchanges[0].response_headers

    def run(client: openai.OpenAI) -> float:
        messages = [{"role": "system", "content": "You count."}, {"role": "user", "content": "Count."}]
        started = time.perf_counter()
        for i in range(calls):
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
            messages.append({"role": "assistant", "content": reply.choices[0].message.content})
            messages.append({"role": "user", "content": f"And {i}?"})
        return (time.perf_counter() - started) / calls

    def mock_client() -> openai.OpenAI:
        state = {"i": 0}

        def handler(request: httpx2.Request) -> httpx2.Response:
            body = bodies[state["i"] % len(bodies)]
            state["i"] += 1
            return httpx2.Response(200, headers=headers, content=body)

        return openai.OpenAI(
            api_key="sk-bench",
            base_url=base_url,
            max_retries=0,
            http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        )

    mock, replay = [], []
    for r in range(rounds):
        order = ("mock", "replay") if r % 2 == 0 else ("replay", "mock")
        for which in order:
            if which == "mock":
                mock.append(run(mock_client()))
            else:
                player = start(session)
                try:
                    replay.append(run(openai.OpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)))
                finally:
                    stop(player)
                assert not player.divergences and player.report()["answered"] == calls
    # The player alone (matching each recorded request, building and streaming the response):
    # what the hook adds in place of a transport, the fastest of ``rounds`` passes over the run.
    requests = [
        httpx2.Request(
            x.method, x.url, headers=[(k, v) for k, v in x.request_headers], content=x.request_body
        )
        for x in recording.exchanges
    ]
    alone = []
    for _ in range(rounds):
        from otel_agent_trace.model_replay import Player

        player = Player(recording)
        started = time.perf_counter()
        for request in requests:
            player.answer(httpx2, request, None).read()
        alone.append((time.perf_counter() - started) / len(requests))
    return {
        "player_ms_per_call": min(alone) * 1000,
        "mock_ms_per_call_min": min(mock) * 1000,
        "replay_ms_per_call_min": min(replay) * 1000,
        "mock_ms_per_call": statistics.median(mock) * 1000,
        "replay_ms_per_call": statistics.median(replay) * 1000,
        "added_ms_per_call": (statistics.median(replay) - statistics.median(mock)) * 1000,
        "added_ms_per_call_paired": statistics.median(b - a for a, b in zip(mock, replay, strict=True))
        * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-model-replay-") as tmp:
        runs = record_and_replay(Path(tmp), args.calls, args.latency_ms)
        cost = machinery(runs["session"], args.calls, args.rounds)
    speedup = runs["recorded_s"] / runs["replayed_s"]
    print(f"{args.calls} calls, model answering in {args.latency_ms} ms:")
    print(f"  recorded run  {runs['recorded_s'] * 1000:9.1f} ms")
    print(f"  replayed run  {runs['replayed_s'] * 1000:9.1f} ms   ({speedup:.0f}x faster)")
    print(f"machinery per call (median of {args.rounds} alternating rounds, {args.calls} calls each):")
    print(f"  mock transport {cost['mock_ms_per_call']:.3f} ms, replay {cost['replay_ms_per_call']:.3f} ms")
    print(
        f"  added by the replay: {cost['added_ms_per_call']:.3f} ms "
        f"(paired rounds: {cost['added_ms_per_call_paired']:.3f} ms; fastest rounds: "
        f"{cost['replay_ms_per_call_min'] - cost['mock_ms_per_call_min']:.3f} ms)"
    )
    print(f"  the player alone (match, build, stream the response): {cost['player_ms_per_call']:.3f} ms")


if __name__ == "__main__":
    main()
