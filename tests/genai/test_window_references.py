"""A conversation kept in a sliding window, sent through the real ``openai`` client to the local
model server: each call's automatic snapshot is written by reference to runs of the last one (format
1.3), so the session file grows by what is new per call, not by the window, and every call's
snapshot reads back as exactly what that call sent."""

from __future__ import annotations

from typing import Any

import orjson

from otel_agent_trace.offline.loader import load_session
from tests.genai.genai_helpers import entries, strip_digests
from tests.genai.test_request_messages import _as_sent

WINDOW = 200


def test_a_sliding_window_of_model_calls_writes_what_is_new_and_reads_back_as_sent(
    openai_client, llm, checkpoint
):
    system = {"role": "system", "content": "Be brief."}
    history: list[Any] = []
    sent: list[list[Any]] = []
    for turn in range(115):
        history.append({"role": "user", "content": f"question {turn}"})
        del history[: max(0, len(history) - WINDOW)]
        if turn == 105:  # a summary in place of the oldest ten messages
            history[:10] = [{"role": "user", "content": "(earlier: ten messages, summarised)"}]
        if turn == 110:  # a note put in the middle
            history.insert(WINDOW // 2, {"role": "user", "content": "(a note in the middle)"})
        messages = [system, *history]
        sent.append([_as_sent(m) for m in messages])
        llm.queue("openai_chat_final")
        reply = openai_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        history.append(reply.choices[0].message)  # the SDK's object, as agents keep it
    assert len(sent[-1]) > WINDOW
    files = list(checkpoint.files)
    checkpoint.stop()
    for path in files:
        lines = [line for line in path.read_bytes().splitlines() if b'"type":"snapshot"' in line]
        assert len(lines) == len(sent)
        refs = [orjson.loads(line)["message_ids"] for line in lines]
        # Once the window is full (call 100 on), each snapshot keeps runs of the last one (until
        # the summary, the window grows again: its leading run alone); the summary and the note
        # are new ids among the runs.
        assert all(isinstance(r, dict) for r in refs[100:])
        runs = [n for n, r in enumerate(refs) if isinstance(r, dict) and type(r["keep"]) is list]
        assert runs == [*range(100, 106), *range(110, 115)]
        assert [n for n in runs if any(type(piece) is str for piece in refs[n]["keep"])] == [105, 110]
        # A window of ~200 ids would be over 3 KB a line; it is what changed, whatever the window.
        id_bytes = len(orjson.dumps(refs[-1]["base"])) + 1  # one id in a list, with its comma
        assert max(map(len, lines[100:])) < 700 < WINDOW * id_bytes / 4
        # The model call's own lists name the snapshot taken as it ended.
        ends = [e["content"] for e in entries(path) if e["type"] == "span.end" and "content" in e]
        assert all(type(c["input_message_ids"]["keep"]) is int for c in ends[100:])
        assert all(c["input_message_ids"]["add"] == [] for c in ends[100:])
    checkpoint_file = next(p for p in files if "checkpoint" in p.name)
    snapshots = load_session(checkpoint_file).snapshots
    assert len(snapshots) == len(sent)
    for snapshot, messages in zip(snapshots, sent, strict=True):
        assert strip_digests(snapshot["agent_messages"][: len(messages)]) == messages
        assert snapshot["agent_messages"][len(messages)]["role"] == "assistant"  # and its answer
