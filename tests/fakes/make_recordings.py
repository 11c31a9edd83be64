"""Writes ``recordings/*.json``: API responses in the exact shapes the OpenAI and Anthropic APIs
send (bodies and SSE event sequences, tool-call turns included).

Run ``python tests/fakes/make_recordings.py`` after changing it; the JSON files are committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "recordings"
CREATED = 1764400000
OPENAI_MODEL = "gpt-4o-mini-2024-07-18"
ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"


def _sse(events: list[tuple[str | None, Any]], done: bool = False) -> dict[str, Any]:
    out = [{"event": name, "data": data} for name, data in events]
    if done:
        out.append({"event": None, "data": "[DONE]"})
    return {"status": 200, "sse": out}


# --- OpenAI chat completions -------------------------------------------------------------------


def _chat_usage(prompt: int, completion: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chat(cid: str, message: dict[str, Any], finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "refusal": None, "annotations": [], **message}
    message.setdefault("content", None)
    return {
        "status": 200,
        "json": {
            "id": cid,
            "object": "chat.completion",
            "created": CREATED,
            "model": OPENAI_MODEL,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_8bda4d3a2c",
        },
    }


def _chunk(cid: str, delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> dict[str, Any]:
    choices = (
        [] if usage is not None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    chunk = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": OPENAI_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_8bda4d3a2c",
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _chat_text_stream(cid: str, pieces: list[str], usage: dict[str, Any]) -> dict[str, Any]:
    events: list[tuple[str | None, Any]] = [
        (None, _chunk(cid, {"role": "assistant", "content": "", "refusal": None}))
    ]
    events += [(None, _chunk(cid, {"content": p})) for p in pieces]
    events.append((None, _chunk(cid, {}, "stop")))
    events.append((None, _chunk(cid, {}, usage=usage)))
    return _sse(events, done=True)


def _chat_tool_stream(cid: str, call_id: str, name: str, arg_pieces: list[str], usage: dict[str, Any]):
    first = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        ],
        "refusal": None,
    }
    events: list[tuple[str | None, Any]] = [(None, _chunk(cid, first))]
    events += [
        (None, _chunk(cid, {"tool_calls": [{"index": 0, "function": {"arguments": p}}]})) for p in arg_pieces
    ]
    events.append((None, _chunk(cid, {}, "tool_calls")))
    events.append((None, _chunk(cid, {}, usage=usage)))
    return _sse(events, done=True)


# --- OpenAI responses --------------------------------------------------------------------------


def _response(rid: str, output: list[dict[str, Any]], usage: dict[str, Any], status: str = "completed"):
    return {
        "id": rid,
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": OPENAI_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _resp_usage(inp: int, out: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": inp + out,
    }


def _resp_message(mid: str, text: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def _resp_text_stream(rid: str, mid: str, pieces: list[str], usage: dict[str, Any]) -> dict[str, Any]:
    text = "".join(pieces)
    seq = iter(range(1000))
    partial = _response(rid, [], None, status="in_progress")  # type: ignore[arg-type]
    item_open = {"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    part_open = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    part_done = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "sequence_number": next(seq), "response": partial}),
        (
            "response.in_progress",
            {"type": "response.in_progress", "sequence_number": next(seq), "response": partial},
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": item_open,
            },
        ),
        (
            "response.content_part.added",
            {
                "type": "response.content_part.added",
                "sequence_number": next(seq),
                "item_id": mid,
                "output_index": 0,
                "content_index": 0,
                "part": part_open,
            },
        ),
    ]
    for p in pieces:
        events.append(
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": mid,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": p,
                    "logprobs": [],
                },
            )
        )
    events += [
        (
            "response.output_text.done",
            {
                "type": "response.output_text.done",
                "sequence_number": next(seq),
                "item_id": mid,
                "output_index": 0,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            },
        ),
        (
            "response.content_part.done",
            {
                "type": "response.content_part.done",
                "sequence_number": next(seq),
                "item_id": mid,
                "output_index": 0,
                "content_index": 0,
                "part": part_done,
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": _resp_message(mid, text),
            },
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "sequence_number": next(seq),
                "response": _response(rid, [_resp_message(mid, text)], usage),
            },
        ),
    ]
    return _sse(events)


def _resp_call(
    fid: str, call_id: str, name: str, arguments: str, status: str = "completed"
) -> dict[str, Any]:
    return {
        "id": fid,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def _resp_tool_stream(
    rid: str, fid: str, call_id: str, name: str, arg_pieces: list[str], usage: dict[str, Any]
) -> dict[str, Any]:
    """A streamed Responses turn that asks for one function call (the events the API sends)."""
    arguments = "".join(arg_pieces)
    seq = iter(range(1000))
    partial = _response(rid, [], None, status="in_progress")  # type: ignore[arg-type]
    done = _resp_call(fid, call_id, name, arguments)
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "sequence_number": next(seq), "response": partial}),
        (
            "response.in_progress",
            {"type": "response.in_progress", "sequence_number": next(seq), "response": partial},
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": _resp_call(fid, call_id, name, "", status="in_progress"),
            },
        ),
    ]
    for piece in arg_pieces:
        events.append(
            (
                "response.function_call_arguments.delta",
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "item_id": fid,
                    "output_index": 0,
                    "delta": piece,
                },
            )
        )
    events += [
        (
            "response.function_call_arguments.done",
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": next(seq),
                "item_id": fid,
                "output_index": 0,
                "name": name,
                "arguments": arguments,
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": done,
            },
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "sequence_number": next(seq),
                "response": _response(rid, [done], usage),
            },
        ),
    ]
    return _sse(events)


# --- Ollama chat (/api/chat, streamed as JSON lines) ----------------------------------------------

OLLAMA_MODEL = "qwen3:1.7b"


def _ollama_stream(message_parts: list[dict[str, Any]], done_reason: str, prompt: int, out: int):
    def line(message: dict[str, Any], done: bool) -> dict[str, Any]:
        return {
            "model": OLLAMA_MODEL,
            "created_at": "2025-11-29T06:26:40.000000Z",
            "message": {"role": "assistant", "content": "", **message},
            "done": done,
        }

    lines = [line(part, False) for part in message_parts]
    final = line({}, True)
    final.update(
        {
            "done_reason": done_reason,
            "total_duration": 1_200_000_000,
            "load_duration": 10_000_000,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 300_000_000,
            "eval_count": out,
            "eval_duration": 800_000_000,
        }
    )
    return {"status": 200, "ndjson": [*lines, final]}


# --- Anthropic messages ------------------------------------------------------------------------


def _msg_usage(inp: int, out: int, cache_read: int = 0, cache_create: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": cache_create,
        "cache_read_input_tokens": cache_read,
        "output_tokens": out,
        "service_tier": "standard",
    }


def _message(mid: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": 200,
        "json": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC_MODEL,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        },
    }


def _message_stream(
    mid: str, blocks: list[dict[str, Any]], stop: str, usage: dict[str, Any]
) -> dict[str, Any]:
    start_usage = dict(usage, output_tokens=1)
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": ANTHROPIC_MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            for piece in block["pieces"]:
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
                )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            for piece in block["pieces"]:
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
                )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def recordings() -> dict[str, Any]:
    weather_args = '{"city": "Paris"}'
    r: dict[str, Any] = {
        # OpenAI chat completions
        "openai_chat_text": _chat(
            "chatcmpl-text001",
            {"content": "Hello! How can I help you today?"},
            "stop",
            _chat_usage(19, 9, cached=4, reasoning=0),
        ),
        "openai_chat_text_stream": _chat_text_stream(
            "chatcmpl-strm001", ["Hello", "! How can", " I help", " you today?"], _chat_usage(19, 9, cached=4)
        ),
        "openai_chat_tool_call": _chat(
            "chatcmpl-tool001",
            {
                "tool_calls": [
                    {
                        "id": "call_weather_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": weather_args},
                    }
                ]
            },
            "tool_calls",
            _chat_usage(81, 16),
        ),
        "openai_chat_tool_call_stream": _chat_tool_stream(
            "chatcmpl-tool002",
            "call_weather_1",
            "get_weather",
            ['{"ci', 'ty": "Pa', 'ris"}'],
            _chat_usage(81, 16),
        ),
        "openai_chat_final": _chat(
            "chatcmpl-final01",
            {"content": "It is 18°C and sunny in Paris."},
            "stop",
            _chat_usage(112, 12, cached=64),
        ),
        "openai_chat_final_stream": _chat_text_stream(
            "chatcmpl-final02", ["It is 18°C", " and sunny", " in Paris."], _chat_usage(112, 12, cached=64)
        ),
        "openai_error_500": {
            "status": 500,
            "json": {"error": {"message": "The server had an error", "type": "server_error", "code": None}},
        },
        "openai_error_400": {
            "status": 400,
            "json": {
                "error": {
                    "message": "Invalid value for 'temperature'",
                    "type": "invalid_request_error",
                    "param": "temperature",
                    "code": "invalid_value",
                }
            },
        },
        # OpenAI responses
        "openai_responses_text": {
            "status": 200,
            "json": _response(
                "resp_text001",
                [_resp_message("msg_text001", "Hello from the Responses API.")],
                _resp_usage(14, 7, cached=2, reasoning=3),
            ),
        },
        "openai_responses_text_stream": _resp_text_stream(
            "resp_strm001", "msg_strm001", ["Hello", " from the", " Responses API."], _resp_usage(14, 7)
        ),
        "openai_responses_tool_call": {
            "status": 200,
            "json": _response(
                "resp_tool001",
                [
                    {
                        "id": "fc_001",
                        "type": "function_call",
                        "status": "completed",
                        "call_id": "call_weather_r1",
                        "name": "get_weather",
                        "arguments": weather_args,
                    }
                ],
                _resp_usage(60, 15),
            ),
        },
        "openai_responses_final": {
            "status": 200,
            "json": _response(
                "resp_final01",
                [_resp_message("msg_final01", "It is 18°C and sunny in Paris.")],
                _resp_usage(90, 11),
            ),
        },
        # A handoff (OpenAI Agents SDK: the triage agent hands over to the agent named "weather")
        "openai_chat_handoff": _chat(
            "chatcmpl-hand001",
            {
                "tool_calls": [
                    {
                        "id": "call_handoff_1",
                        "type": "function",
                        "function": {"name": "transfer_to_weather", "arguments": "{}"},
                    }
                ]
            },
            "tool_calls",
            _chat_usage(70, 10),
        ),
        "openai_chat_handoff_stream": _chat_tool_stream(
            "chatcmpl-hand002", "call_handoff_1", "transfer_to_weather", ["{", "}"], _chat_usage(70, 10)
        ),
        "openai_responses_handoff": {
            "status": 200,
            "json": _response(
                "resp_hand001",
                [_resp_call("fc_hand001", "call_handoff_r1", "transfer_to_weather", "{}")],
                _resp_usage(55, 9),
            ),
        },
        "openai_responses_handoff_stream": _resp_tool_stream(
            "resp_hand002",
            "fc_hand002",
            "call_handoff_r1",
            "transfer_to_weather",
            ["{", "}"],
            _resp_usage(55, 9),
        ),
        "openai_responses_tool_call_stream": _resp_tool_stream(
            "resp_tool002",
            "fc_002",
            "call_weather_r1",
            "get_weather",
            ['{"ci', 'ty": "Pa', 'ris"}'],
            _resp_usage(60, 15),
        ),
        "openai_responses_final_stream": _resp_text_stream(
            "resp_final02", "msg_final02", ["It is 18°C", " and sunny", " in Paris."], _resp_usage(90, 11)
        ),
        # Ollama (its tool calls have no ids: Strands invents them)
        "ollama_chat_tool_call_stream": _ollama_stream(
            [{"tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}],
            "stop",
            80,
            15,
        ),
        "ollama_chat_final_stream": _ollama_stream(
            [{"content": "It is 18°C"}, {"content": " and sunny in Paris."}], "stop", 110, 12
        ),
        # Anthropic messages
        "anthropic_messages_text": _message(
            "msg_01Text",
            [{"type": "text", "text": "Hello! How can I help?"}],
            "end_turn",
            _msg_usage(12, 8, 3),
        ),
        "anthropic_messages_text_stream": _message_stream(
            "msg_01Strm",
            [{"type": "text", "pieces": ["Hello", "! How can", " I help?"]}],
            "end_turn",
            _msg_usage(12, 8, 3),
        ),
        "anthropic_messages_tool_use": _message(
            "msg_01Tool",
            [
                {"type": "text", "text": "Let me check the weather."},
                {
                    "type": "tool_use",
                    "id": "toolu_01Weather",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
            "tool_use",
            _msg_usage(380, 40),
        ),
        "anthropic_messages_tool_use_stream": _message_stream(
            "msg_01ToolS",
            [
                {"type": "text", "pieces": ["Let me check", " the weather."]},
                {
                    "type": "tool_use",
                    "id": "toolu_01Weather",
                    "name": "get_weather",
                    "pieces": ['{"city"', ': "Paris"}'],
                },
            ],
            "tool_use",
            _msg_usage(380, 40),
        ),
        "anthropic_messages_final": _message(
            "msg_01Final",
            [{"type": "text", "text": "It is 18°C and sunny in Paris."}],
            "end_turn",
            _msg_usage(450, 14),
        ),
        "anthropic_messages_final_stream": _message_stream(
            "msg_01FinalS",
            [{"type": "text", "pieces": ["It is 18°C", " and sunny in Paris."]}],
            "end_turn",
            _msg_usage(450, 14),
        ),
        "anthropic_error_529": {
            "status": 529,
            "json": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        },
        "anthropic_error_400": {
            "status": 400,
            "json": {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
            },
        },
    }
    r.update(bedrock_recordings())
    return r


# --- Amazon Bedrock (bedrock-runtime): Converse bodies, event streams, InvokeModel bodies -------

BEDROCK_ANTHROPIC_MODEL = "claude-3-5-haiku-20241022"
_CITY_JSON = ['{"city": ', '"Paris"}']


def _converse(rid: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": 200,
        "headers": {"x-amzn-RequestId": rid},
        "json": {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": usage,
            "metrics": {"latencyMs": 120},
        },
    }


def _events(rid: str, events: list[tuple[str, Any]]) -> dict[str, Any]:
    """An AWS event stream: ``(event type, payload)``, or ``("chunk", InvokeModel's chunk JSON)``."""
    items = [
        {"event": kind, "chunk": data} if kind == "chunk" else {"event": kind, "data": data}
        for kind, data in events
    ]
    return {"status": 200, "headers": {"x-amzn-RequestId": rid}, "eventstream": items}


def _text_deltas(pieces: list[str], index: int = 0) -> list[tuple[str, Any]]:
    return [("contentBlockDelta", {"delta": {"text": p}, "contentBlockIndex": index}) for p in pieces]


def bedrock_recordings() -> dict[str, Any]:
    tool_use = {"toolUseId": "tooluse_weather01", "name": "get_weather", "input": {"city": "Paris"}}
    return {
        "bedrock_converse_tool_use": _converse(
            "req-converse-tool01",
            [{"text": "Let me check the weather."}, {"toolUse": tool_use}],
            "tool_use",
            {"inputTokens": 50, "outputTokens": 20, "totalTokens": 75, "cacheReadInputTokens": 5},
        ),
        "bedrock_converse_final": _converse(
            "req-converse-final01",
            [{"text": "It is 18°C and sunny in Paris."}],
            "end_turn",
            {"inputTokens": 90, "outputTokens": 12, "totalTokens": 102},
        ),
        "bedrock_converse_stream_tool_use": _events(
            "req-stream-tool01",
            [
                ("messageStart", {"role": "assistant"}),
                *_text_deltas(["Let me check ", "the weather."]),
                ("contentBlockStop", {"contentBlockIndex": 0}),
                (
                    "contentBlockStart",
                    {
                        "start": {"toolUse": {"toolUseId": "tooluse_weather02", "name": "get_weather"}},
                        "contentBlockIndex": 1,
                    },
                ),
                *[
                    ("contentBlockDelta", {"delta": {"toolUse": {"input": p}}, "contentBlockIndex": 1})
                    for p in _CITY_JSON
                ],
                ("contentBlockStop", {"contentBlockIndex": 1}),
                ("messageStop", {"stopReason": "tool_use"}),
                (
                    "metadata",
                    {
                        "usage": {"inputTokens": 50, "outputTokens": 20, "totalTokens": 70},
                        "metrics": {"latencyMs": 130},
                    },
                ),
            ],
        ),
        "bedrock_converse_stream_final": _events(
            "req-stream-final01",
            [
                ("messageStart", {"role": "assistant"}),
                *_text_deltas(["It is 18°C ", "and sunny in Paris."]),
                ("contentBlockStop", {"contentBlockIndex": 0}),
                ("messageStop", {"stopReason": "end_turn"}),
                (
                    "metadata",
                    {
                        "usage": {
                            "inputTokens": 90,
                            "outputTokens": 12,
                            "totalTokens": 107,
                            "cacheWriteInputTokens": 5,
                        },
                        "metrics": {"latencyMs": 90},
                    },
                ),
            ],
        ),
        "bedrock_invoke_anthropic_tool_use": {
            "status": 200,
            "headers": {"x-amzn-RequestId": "req-invoke-tool01"},
            "json": {
                "id": "msg_bdrk_01Tool",
                "type": "message",
                "role": "assistant",
                "model": BEDROCK_ANTHROPIC_MODEL,
                "content": [
                    {"type": "text", "text": "Let me check the weather."},
                    {
                        "type": "tool_use",
                        "id": "toolu_bdrk_01Weather",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 40, "output_tokens": 25, "cache_read_input_tokens": 3},
            },
        },
        "bedrock_invoke_anthropic_stream_tool_use": _events(
            "req-invoke-stream01",
            [
                (
                    "chunk",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_bdrk_01Strm",
                            "type": "message",
                            "role": "assistant",
                            "model": BEDROCK_ANTHROPIC_MODEL,
                            "content": [],
                            "stop_reason": None,
                            "usage": {"input_tokens": 40, "output_tokens": 1},
                        },
                    },
                ),
                (
                    "chunk",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "chunk",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "Let me check the weather."},
                    },
                ),
                ("chunk", {"type": "content_block_stop", "index": 0}),
                (
                    "chunk",
                    {
                        "type": "content_block_start",
                        "index": 1,
                        "content_block": {
                            "type": "tool_use",
                            "id": "toolu_bdrk_02Weather",
                            "name": "get_weather",
                            "input": {},
                        },
                    },
                ),
                *[
                    (
                        "chunk",
                        {
                            "type": "content_block_delta",
                            "index": 1,
                            "delta": {"type": "input_json_delta", "partial_json": p},
                        },
                    )
                    for p in _CITY_JSON
                ],
                ("chunk", {"type": "content_block_stop", "index": 1}),
                (
                    "chunk",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                        "usage": {"output_tokens": 25},
                    },
                ),
                (
                    "chunk",
                    {
                        "type": "message_stop",
                        "amazon-bedrock-invocationMetrics": {
                            "inputTokenCount": 40,
                            "outputTokenCount": 25,
                            "invocationLatency": 300,
                            "firstByteLatency": 100,
                        },
                    },
                ),
            ],
        ),
        "bedrock_error_throttling": {
            "status": 429,
            "headers": {
                "x-amzn-RequestId": "req-throttled01",
                "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            },
            "json": {"message": "Too many requests, please wait before trying again."},
        },
    }


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, body in recordings().items():
        (OUT / f"{name}.json").write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
