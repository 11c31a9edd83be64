"""The session format's building blocks: ids, one-line serialization of any value, line reading."""

from __future__ import annotations

import io
import re
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt


def test_session_ids_started_in_the_same_second_never_collide():
    now = 1_800_000_000.0
    ids = {fmt.new_session_id(now) for _ in range(20_000)}
    assert len(ids) == 20_000
    assert all(re.fullmatch(r"session-\d{8}-\d{6}-[0-9a-f]{8}", i) for i in ids)


def test_entry_prefixes_differ_between_a_session_its_tiers_and_its_children():
    sid = fmt.new_session_id()
    prefixes = {
        fmt.entry_prefix(sid),
        fmt.entry_prefix(sid, "/checkpoint"),
        fmt.entry_prefix(sid, "p123"),
        fmt.entry_prefix(sid, "p124"),
    }
    assert len(prefixes) == 4
    assert fmt.entry_prefix(sid) == sid[-8:]
    assert fmt.entry_id("abcd1234", 7) == "abcd1234-0007"


def test_ids_are_hex_strings_so_128_bit_trace_ids_survive_json():
    trace_id = (1 << 128) - 1
    line = fmt.dumps({"trace_id": fmt.trace_id_hex(trace_id), "span_id": fmt.span_id_hex(1)})
    back = orjson.loads(line)
    assert int(back["trace_id"], 16) == trace_id and back["span_id"] == "0000000000000001"


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


ODD_VALUES = [
    b"\x00\xff",
    {1, 2},
    Path("/tmp/x"),
    ValueError("boom"),
    2**200,
    float("nan"),
    "lone surrogate \udc80 from an undecodable file name",
    {"\udcff key": "v"},
    Path("/tmp/\udc80"),
    _NoRepr(),
    object(),
    "line\nbreaks\r\nand\u2028separators",
]


def test_dumps_writes_any_value_as_one_line_and_never_raises():
    for value in ODD_VALUES:
        line = fmt.dumps({"id": "x-0000", "value": value})
        assert line.endswith(b"\n") and line.count(b"\n") == 1, value
        assert orjson.loads(line)["id"] == "x-0000"


def test_non_finite_floats_become_null():
    assert orjson.loads(fmt.dumps({"a": float("inf"), "b": float("nan")})) == {"a": None, "b": None}


def test_recursive_values_are_cut_not_fatal():
    loop: dict = {}
    loop["self"] = loop
    line = fmt.dumps({"value": loop})
    assert line.count(b"\n") == 1 and b"too deep" in line


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_dumps_round_trips_json_values_on_one_line(value):
    line = fmt.dumps({"v": value})
    assert line.count(b"\n") == 1
    back = orjson.loads(line)["v"]
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        assert back == str(value)
    elif _has_surrogate(value) or _has_big_int(value):
        assert back is not None
    else:
        assert back == value


def _has_surrogate(value) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def _has_big_int(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -(2**63) <= value < 2**64
    if isinstance(value, list):
        return any(_has_big_int(v) for v in value)
    if isinstance(value, dict):
        return any(_has_big_int(v) for v in value.values())
    return False


def test_iter_lines_yields_line_numbers_and_skips_blank_lines():
    stream = io.BytesIO(b'{"id": "a-0000"}\n\n{"id": "a-0001"}\n')
    assert [(n, e["id"]) for n, e in fmt.iter_lines(stream, "f.jsonl")] == [(1, "a-0000"), (3, "a-0001")]


def test_session_file_names():
    assert fmt.session_file_name("s", "trace") == "s.jsonl"
    assert fmt.session_file_name("s", "checkpoint") == "s.checkpoint.jsonl"
    assert fmt.session_file_name("s", "trace", "p42") == "s.p42.jsonl"
    assert fmt.session_file_name("s", "checkpoint", "p42") == "s.p42.checkpoint.jsonl"


def test_a_tool_result_json_cannot_hold_still_ends_its_span(recording):
    """Regression: a lone surrogate (an undecodable file name) made the span.end entry fail to
    serialize, so a finished tool call looked unfinished."""

    @oat.tool
    def list_odd_names() -> list[str]:
        return ["ok.txt", "bad-\udc80.txt"]

    assert list_odd_names() == ["ok.txt", "bad-\udc80.txt"]
    path = recording.files[0]
    recording.stop()
    session = oat.load_session(path)
    (tool,) = [s for s in session.spans if s.layer == "tool"]
    assert tool.finished and tool.status != fmt.STATUS_UNFINISHED
