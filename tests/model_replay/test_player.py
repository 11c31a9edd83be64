"""The player and the request diff on their own: real ``httpx2`` requests and responses against a
recording built in memory (no process, no server)."""

from __future__ import annotations

import json

import httpx2
import pytest

from otel_agent_trace.model_replay import Divergence, ModelReplayDivergence, ModelReplayRefused, Player
from otel_agent_trace.model_replay._diff import differences
from otel_agent_trace.model_replay._recording import Exchange, Recording

URL = "http://127.0.0.1:8000/v1/chat/completions"


def _exchange(index: int, content: str, answer: str) -> Exchange:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]}).encode()
    return Exchange(
        index=index, entry_id=f"e-{index}", span_name="chat m", method="POST", url=URL,
        request_headers=[], request_body=body, status=200,
        response_headers=[["content-type", "text/event-stream"]],
        chunks=[f"data: {answer} {i}\n\n".encode() for i in range(3)],
        http_version="HTTP/1.1", reason="OK", complete=True, truncated=False,
    )  # fmt: skip


def _recording() -> Recording:
    return Recording("mem.jsonl", "session-x", "checkpoint", [_exchange(1, "a", "A"), _exchange(2, "b", "B")])


def _request(content: str, url: str = URL) -> httpx2.Request:
    return httpx2.Request(
        "POST", url, json={"model": "m", "messages": [{"role": "user", "content": content}]}
    )


def _answer(player: Player, request: httpx2.Request) -> list[bytes]:
    response = player.answer(httpx2, request, send=None)
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    return list(response.iter_raw())


def test_recorded_answers_stream_back_chunk_by_chunk_in_order():
    player = Player(_recording())
    assert _answer(player, _request("a")) == [b"data: A 0\n\n", b"data: A 1\n\n", b"data: A 2\n\n"]
    assert _answer(player, _request("b"))[0] == b"data: B 0\n\n"
    assert player.report()["answered"] == 2 and player.report()["unused"] == 0


def test_a_recorded_body_is_read_once_like_a_network_stream():
    response = Player(_recording()).answer(httpx2, _request("a"), send=None)
    first = iter(response.stream)
    assert next(first) == b"data: A 0\n\n"
    assert list(response.stream) == [b"data: A 1\n\n", b"data: A 2\n\n"]  # a second pass goes on
    assert list(response.stream) == []


def test_requests_reaching_the_transport_out_of_order_are_matched_without_a_divergence():
    player = Player(_recording())
    assert _answer(player, _request("b"))[0] == b"data: B 0\n\n"
    assert _answer(player, _request("a"))[0] == b"data: A 0\n\n"
    assert player.divergences == []


def test_a_request_beyond_the_recording_stops_and_later_ones_are_refused():
    player = Player(_recording())
    _answer(player, _request("a"))
    _answer(player, _request("b"))
    with pytest.raises(ModelReplayDivergence, match="beyond the end of the recording"):
        player.answer(httpx2, _request("c"), send=None)
    with pytest.raises(ModelReplayRefused, match="stopped at an earlier divergence"):
        player.answer(httpx2, _request("a"), send=None)


def test_continue_answers_the_next_recorded_response_and_counts_each_divergence():
    player = Player(_recording(), on_divergence="continue")
    assert _answer(player, _request("x"))[0] == b"data: A 0\n\n"
    assert _answer(player, _request("b"))[0] == b"data: B 0\n\n"
    (d,) = player.divergences
    assert isinstance(d, Divergence) and d.call == 1 and d.recorded_index == 1 and d.entry_id == "e-1"
    assert d.differences == ['body.messages[0].content: recorded "a", now "x"']


def test_another_origin_is_refused_even_with_a_recorded_body():
    player = Player(_recording())
    with pytest.raises(ModelReplayRefused, match="never talked to api.example.com"):
        player.answer(httpx2, _request("a", "http://api.example.com/v1/chat/completions"), send=None)
    with pytest.raises(ModelReplayRefused, match="never talked to 127.0.0.1:9000"):  # another scheme
        player.answer(httpx2, _request("a", "https://127.0.0.1:9000/v1/chat/completions"), send=None)
    assert player.report()["refused"] == [
        "POST http://api.example.com/v1/chat/completions",
        "POST https://127.0.0.1:9000/v1/chat/completions",
    ]


def test_another_loopback_port_is_the_recorded_local_server():
    """A local model server binds a free port each run (the README's demo model does)."""
    player = Player(_recording())
    assert _answer(player, _request("a", "http://localhost:9000/v1/chat/completions"))
    (call,) = player.report()["calls"]
    assert call["status"] == "replayed" and call["origin"] == "loopback: port not compared"


def test_live_sends_the_diverged_request_and_the_rest_to_the_live_origin():
    sent = []

    def send(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, content=b"live")

    player = Player(_recording(), on_divergence="live", live_url="http://127.0.0.1:7000")
    assert player.answer(httpx2, _request("x"), send).read() == b"live"
    assert player.answer(httpx2, _request("b"), send).read() == b"live"
    assert [str(r.url) for r in sent] == ["http://127.0.0.1:7000/v1/chat/completions"] * 2
    assert (
        sent[0].headers["host"] == "127.0.0.1:7000"
        and json.loads(sent[0].content)["messages"][0]["content"] == "x"
    )


def test_credentials_in_the_url_are_not_kept_and_not_compared():
    from otel_agent_trace.instrumentation.system.http import url_without_secrets

    kept = url_without_secrets("https://user:pw@api.example.com/v1/m?alt=sse&key=AIzaSecret1&api_key=x")
    assert kept == "https://api.example.com/v1/m?alt=sse"
    assert url_without_secrets(URL) == URL
    recorded = _recording()
    recorded.exchanges[0].url = "http://127.0.0.1:8000/v1/chat/completions?alt=sse"
    player = Player(recorded)
    assert _answer(player, _request("a", "http://127.0.0.1:8000/v1/chat/completions?alt=sse&key=NEW"))
    assert player.divergences == [] and "NEW" not in json.dumps(player.report())


def test_differences_name_json_paths_and_diff_long_text():
    old = json.dumps({"model": "m", "temperature": 0, "messages": [{"content": "one\ntwo\nthree"}]}).encode()
    new = json.dumps({"model": "n", "messages": [{"content": "one\n2\nthree"}], "tools": []}).encode()
    found = differences("POST", "/v1/x", new, "GET", "/v1/y", old)
    assert found[0] == "method: recorded GET, now POST" and found[1] == "path: recorded /v1/y, now /v1/x"
    assert 'body.model: recorded "m", now "n"' in found
    assert "body.temperature: recorded 0, now absent" in found
    assert "body.tools: absent in the recording, now []" in found
    text = next(d for d in found if d.startswith("body.messages[0].content"))
    assert "-two" in text and "+2" in text
    assert differences("POST", "/a", old, "POST", "/a", old) == []
