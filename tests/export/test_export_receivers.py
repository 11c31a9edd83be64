"""``export`` against real local OTLP receivers, HTTP and gRPC alike: headers from the
environment and from ``--header`` merge (the flag wins per key), and a receiver's partial success
(spans rejected) is said, counted, and exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import cli, record
from .receivers import RECEIVERS, Receiver

PROTOCOLS = list(RECEIVERS)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return record(tmp_path_factory.mktemp("rec"))


@pytest.fixture
def receiver(request) -> Iterator[type[Receiver]]:
    made: list[Receiver] = []

    def make(protocol: str, **kwargs) -> Receiver:
        made.append(RECEIVERS[protocol](**kwargs))
        return made[-1]

    yield make  # type: ignore[misc]
    for r in made:
        r.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_header_flags_add_to_the_environment_headers_and_win_per_key(recording, receiver, protocol):
    rcv = receiver(protocol)
    done = cli(
        "export", str(recording), "--otlp", rcv.url, "--protocol", protocol,
        "--header", "X-Both=from-flag", "--header", "x-flag=2",
        env={"OTEL_EXPORTER_OTLP_HEADERS": "x-env=1,x-both=from-env,Authorization=Bearer%20env"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert rcv.requests and rcv.spans == 5
    for headers, _ in rcv.requests:
        assert headers["x-env"] == "1" and headers["authorization"] == "Bearer env"
        assert headers["x-flag"] == "2"
        assert headers["x-both"] == "from-flag"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_traces_headers_variable_comes_before_the_general_one(recording, receiver, protocol):
    rcv = receiver(protocol)
    done = cli(
        "export", str(recording), "--otlp", rcv.url, "--protocol", protocol, "--header", "x-flag=1",
        env={"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-traces=t", "OTEL_EXPORTER_OTLP_HEADERS": "x-general=g"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    headers = rcv.requests[0][0]
    assert headers["x-traces"] == "t" and headers["x-flag"] == "1" and "x-general" not in headers


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rejected_spans_are_counted_said_and_exit_1(recording, receiver, protocol):
    rcv = receiver(protocol, reject=1, message="span too old")
    done = cli("export", str(recording), "--otlp", rcv.url, "--protocol", protocol, "--batch-size", "2")
    assert done.returncode == 1, done.stderr
    assert len(rcv.requests) == 3, "every batch is still sent"
    assert "the backend rejected 3 of the 5 spans sent: span too old" in done.stderr
    assert "sent 5 spans (3 rejected)" in done.stdout
    as_json = cli("export", str(recording), "--otlp", rcv.url, "--protocol", protocol, "--json")
    assert as_json.returncode == 1
    answer = json.loads(as_json.stdout)
    assert answer["spans"] == 5 and answer["rejected"] == 1 and "span too old" in answer["error"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_partial_success_that_rejects_nothing_is_a_note(recording, receiver, protocol):
    rcv = receiver(protocol, message="attribute truncated")
    done = cli("export", str(recording), "--otlp", rcv.url, "--protocol", protocol)
    assert done.returncode == 0, done.stderr
    assert "note: the backend said: attribute truncated" in done.stderr
    assert "sent 5 spans" in done.stdout and "rejected" not in done.stdout


def test_export_dir_exits_1_when_a_session_had_spans_rejected(tmp_path, receiver):
    record(tmp_path / "d")
    rcv = receiver("http/protobuf", reject=2)
    done = cli("export-dir", str(tmp_path / "d"), "--otlp", rcv.url)
    assert done.returncode == 1
    assert "the backend rejected 2 of the 5 spans sent (it gave no reason)" in done.stderr
