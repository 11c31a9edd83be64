"""Hand-written tool-calling agent loops on the raw SDKs: the span tree (agent → model calls and
tools), the conversation rebuilt exactly from the session file, a snapshot per turn that
references messages instead of repeating them, and parenting under 20 concurrent agents."""

from __future__ import annotations

import asyncio
import json

import orjson

import otel_agent_trace as oat
from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import entries, model_spans, strip_digests

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@oat.tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"18°C and sunny in {city}"


def _checkpoint_file(session):
    return next(p for p in session.files if "checkpoint" in p.name)


def test_openai_tool_loop_rebuilds_exact_conversation(openai_client, llm, checkpoint, memory_exporter):
    llm.queue("openai_chat_tool_call", "openai_chat_final")
    messages = [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "What's the weather in Paris?"},
    ]
    with oat.agent("weather-bot"):
        while True:
            resp = openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
            msg = resp.choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            for call in msg.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    path = _checkpoint_file(checkpoint)
    checkpoint.stop()

    session = load_session(path)
    assert strip_digests(session.conversation()) == messages
    # the tree: agent → chat, tool, chat
    spans = {s.name: s for s in memory_exporter.get_finished_spans()}
    agent = spans["invoke_agent weather-bot"]
    chats = model_spans(memory_exporter)
    assert len(chats) == 2 and all(c.parent.span_id == agent.context.span_id for c in chats)
    assert spans["execute_tool get_weather"].parent.span_id == agent.context.span_id
    assert chats[0].attributes["agent_trace.tool_calls.ids"] == ("call_weather_1",)
    # a snapshot per turn; each references messages by id, none repeats the text
    assert [len(s["agent_messages"]) for s in session.snapshots] == [3, 5]
    assert [s["tools_loaded"] for s in session.snapshots] == [["get_weather"]] * 2  # the tools offered
    assert strip_digests(session.snapshots[-1]["agent_messages"]) == messages
    raw = entries(path)
    snaps = [e for e in raw if e["type"] == "snapshot"]
    assert all("agent_messages" not in s and len(s["message_ids"]) == s["messages_count"] for s in snaps)
    texts = [e for e in raw if e["type"] == "message"]
    assert len(texts) == len({orjson.dumps(e["digest"]) for e in texts}) == len(messages)


def test_anthropic_tool_loop_rebuilds_exact_conversation(anthropic_client, llm, checkpoint, memory_exporter):
    llm.queue("anthropic_messages_tool_use_stream", "anthropic_messages_final_stream")
    tools = [
        {
            "name": "get_weather",
            "description": "Weather of a city.",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]
    messages = [{"role": "user", "content": "What's the weather in Paris?"}]
    with oat.agent("claude-weather"):
        while True:
            with anthropic_client.messages.stream(
                model="claude-test",
                max_tokens=500,
                system="You answer weather questions.",
                messages=messages,
                tools=tools,
            ) as stream:
                final = stream.get_final_message()
            messages.append(
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]}
            )
            uses = [b for b in final.content if b.type == "tool_use"]
            if not uses:
                break
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": b.id, "content": get_weather(**b.input)}
                        for b in uses
                    ],
                }
            )
    path = _checkpoint_file(checkpoint)
    checkpoint.stop()
    session = load_session(path)
    rebuilt = strip_digests(session.conversation())
    assert [m["role"] for m in rebuilt] == [m["role"] for m in messages]
    assert rebuilt[:-1] == messages[:-1]
    assert rebuilt[-1]["content"] == [{"type": "text", "text": "It is 18°C and sunny in Paris."}]
    assert rebuilt[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01Weather",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert session.snapshots[-1]["system_prompt"] == "You answer weather questions."
    assert session.snapshots[-1]["model_info"]["provider"] == "anthropic"
    agent = next(s for s in memory_exporter.get_finished_spans() if s.name == "invoke_agent claude-weather")
    assert all(c.parent.span_id == agent.context.span_id for c in model_spans(memory_exporter))


async def test_twenty_concurrent_agents_parent_their_model_calls(async_openai_client, memory_exporter):
    @oat.agent
    async def worker(i: int) -> str:
        first = await async_openai_client.chat.completions.create(
            model=f"m{i}", messages=[{"role": "user", "content": str(i)}]
        )
        stream = await async_openai_client.chat.completions.create(model=f"m{i}", messages=[], stream=True)
        async for _ in stream:
            await asyncio.sleep(0)
        return first.id

    results = await asyncio.gather(*(worker(i) for i in range(20)))
    assert results == ["chatcmpl-text001"] * 20
    spans = memory_exporter.get_finished_spans()
    agents = [s for s in spans if s.name == "invoke_agent worker"]
    assert len(agents) == 20
    by_id = {a.context.span_id: a for a in agents}
    chats = model_spans(memory_exporter)
    assert len(chats) == 40
    for chat in chats:
        parent = by_id[chat.parent.span_id]
        assert parent.context.trace_id == chat.context.trace_id
        i = chat.attributes["gen_ai.request.model"][1:]
        assert sum(1 for c in chats if c.parent.span_id == parent.context.span_id) == 2
        assert all(
            c.attributes["gen_ai.request.model"] == f"m{i}"
            for c in chats
            if c.parent.span_id == parent.context.span_id
        )
    assert len({a.context.trace_id for a in agents}) == 20


def test_threads_parent_their_model_calls(openai_client, memory_exporter):
    from concurrent.futures import ThreadPoolExecutor

    def run(i: int) -> None:
        with oat.agent(f"t{i}"):
            openai_client.chat.completions.create(model=f"m{i}", messages=[])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(run, range(8)))
    spans = memory_exporter.get_finished_spans()
    agents = {s.context.span_id: s for s in spans if s.name.startswith("invoke_agent t")}
    assert len(agents) == 8 and len(model_spans(memory_exporter)) == 8
    for chat in model_spans(memory_exporter):
        assert (
            agents[chat.parent.span_id].name == "invoke_agent t" + chat.attributes["gen_ai.request.model"][1:]
        )
